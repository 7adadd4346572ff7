"""How well does the engine rank the shipped catalog on real failure tails? No database needed.

Loads the catalog (English texts; the Chinese texts join the description; every signature),
builds the index, analyses each `<id>.log` of an evaluation folder and compares the first
suggestion with the label in `manifest.jsonl` (`none` = no catalog entry applies), or with
`<name>.expected.json` for a folder of test cases. Prints top-1 (of every answer, and of
confident answers only), top-3, how many `none` cases got a confident suggestion, and every
miss with the evidence that decided it, so a miss can be traced to a signature or to the
ranking.

usage: .venv/bin/python bench/eval_engine.py FOLDER [FOLDER …] [-v]

Calibration, over every case of every folder: of the tails whose first suggestion is
confident, the share where it is right (a `none` case's confident answer is always wrong).

Each FOLDER holds `<id>.log` files and either a `manifest.jsonl` (one {"id", "label", "log_path"}
object a line, `log_path` optional) or `<id>.expected.json` files, e.g. tests/logmatch/cases.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from incidents.catalog import engine_specs
from incidents.logmatch import (
    KnowledgeIndex,
    Report,
    analyze,
    build_index,
)


def catalog_index() -> KnowledgeIndex:
    index = build_index(*engine_specs())
    for key, reason in index.rejected.items():
        print(f"rejected {key}: {reason}")
    return index


def describe(report: Report, label: str) -> str:
    lines = []
    for position, suggestion in enumerate(report.suggestions[:3], 1):
        mark = "*" if suggestion.slug == label else " "
        best = suggestion.evidence[0]
        lines.append(
            f"    {mark}{position}. {suggestion.slug} {suggestion.score:.2f}"
            f"{' confident' if suggestion.confident else ''} <- {best.kind}"
            f"{' ' + best.signature if best.signature else ''} line {best.line}: {best.text[:110]}"
        )
    if not report.suggestions:
        lines.append("    (no suggestion)")
    lines.append(f"    stage {report.stage} ({report.stage_reason})")
    return "\n".join(lines)


def load_cases(folder: Path) -> list[dict]:
    """`manifest.jsonl` rows, or one row per `<name>.expected.json` of a test-case folder."""
    manifest = folder / "manifest.jsonl"
    if manifest.exists():
        rows = manifest.read_text(encoding="utf-8").splitlines()
        return [json.loads(row) for row in rows if row.strip()]
    cases = []
    for path in sorted(folder.glob("*.expected.json")):
        expected = json.loads(path.read_text(encoding="utf-8"))
        name = path.name.removesuffix(".expected.json")
        cases.append(
            {
                "id": name,
                "label": expected["slug"],
                "log_path": expected.get("log_path"),
                "unsure": bool(expected.get("unsure")),
            }
        )
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "folders",
        type=Path,
        nargs="+",
        metavar="FOLDER",
        help="the tails: <id>.log with manifest.jsonl or <id>.expected.json",
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="print every case")
    args = parser.parse_args()

    index = catalog_index()
    cases = [{**case, "folder": folder} for folder in args.folders for case in load_cases(folder)]
    labelled = [case for case in cases if case["label"] != "none"]
    top1 = top1_confident = top3 = confident_none = confident_answers = 0
    sure_top1 = 0  # of the labels their gatherer did not mark unsure
    report_lines = []
    for case in cases:
        log = (case["folder"] / f"{case['id']}.log").read_bytes()
        report = analyze(log, index, log_path=case.get("log_path"))
        slugs = [suggestion.slug for suggestion in report.suggestions]
        label = case["label"]
        confident_answers += report.confident
        if label == "none":
            wrong = any(suggestion.confident for suggestion in report.suggestions)
            confident_none += wrong
        else:
            right = slugs[:1] == [label]
            top1 += right
            sure_top1 += right and not case.get("unsure")
            top1_confident += right and report.confident
            top3 += label in slugs[:3]
            wrong = not (right and report.confident)
        if wrong or args.verbose:
            verdict = "MISS" if wrong else "ok"
            report_lines.append(
                f"{verdict} {case['id']} expected {label}\n{describe(report, label)}"
            )

    none_count = len(cases) - len(labelled)
    total = max(1, len(labelled))
    print("\n\n".join(report_lines))
    print()
    print(f"cases: {len(cases)} ({len(labelled)} labelled, {none_count} none)")
    print(f"top-1:                  {top1}/{len(labelled)} = {top1 / total:.1%}")
    print(
        f"top-1 and confident:    {top1_confident}/{len(labelled)} = {top1_confident / total:.1%}"
    )
    print(f"top-3:                  {top3}/{len(labelled)} = {top3 / total:.1%}")
    sure = [case for case in labelled if not case.get("unsure")]
    if sure and len(sure) < len(labelled):
        print(
            f"top-1, labels not marked unsure: {sure_top1}/{len(sure)} = {sure_top1 / len(sure):.1%}"
        )
    print(f"none cases with a confident suggestion: {confident_none}/{none_count}")
    right = top1_confident
    print(
        f"calibration: confident answers right {right}/{confident_answers}"
        f" = {right / max(1, confident_answers):.1%}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
