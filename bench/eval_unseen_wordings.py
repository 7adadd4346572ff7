"""How well does the engine rank an incident when the tail's wording is one no signature knows?

A blind set measures that best, but it is small and costly to gather. This asks the labelled
real tails the same question: for each incident, build the index without that incident's
signatures and their example lines (its texts stay: title, symptom, cause, remedy, tags, both
languages), analyse each tail labelled with it, and see where it ranks. What ranks it then
is what a new wording meets: text similarity, the stage's, a kill's or a dependency drift's
lead, and other incidents' signatures and example lines, which must not be confidently wrong.
No database needed.

Prints top-1 and top-3 of the dropped incident, how many tails get no suggestion at all, and
how many get a confident answer that is wrong (another incident claims the tail).

With --keep-other-examples, the incident keeps the example lines that none of its tails
contain (lines seen in other threads): a new wording of a known failure, as it usually comes.

usage: .venv/bin/python bench/eval_unseen_wordings.py FOLDER [FOLDER …] [-v] [--keep-other-examples]
(the folders of bench/eval_engine.py, e.g. tests/logmatch/cases ../shared/eval/dev)
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter, defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.eval_engine import load_cases
from incidents.catalog import engine_specs
from incidents.logmatch import analyze, build_index


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument(
        "-v",
        action="store_true",
        help="print every tail not in the top 3, and every confident wrong answer",
    )
    parser.add_argument(
        "--keep-other-examples",
        action="store_true",
        help="the incident keeps the example lines that none of its tails contain: those its "
        "signatures were written from in other threads, as a new wording meets them",
    )
    args = parser.parse_args()

    by_label: dict[str, list[tuple[str, bytes, str | None]]] = defaultdict(list)
    for folder in args.folders:
        for case in load_cases(folder):
            if case["label"] != "none":
                log = (folder / f"{case['id']}.log").read_bytes()
                by_label[case["label"]].append((case["id"], log, case.get("log_path")))

    incidents, signatures = engine_specs()
    places: Counter[int] = Counter()
    silent = wrong_and_sure = 0
    started = time.perf_counter()
    for slug, tails in sorted(by_label.items()):
        texts = [text.decode("utf-8", "replace") for _, text, _ in tails]
        kept = args.keep_other_examples
        unseen = [
            replace(i, examples=_not_in(i.examples, texts) if kept else ()) if i.slug == slug else i
            for i in incidents
        ]
        index = build_index(unseen, [s for s in signatures if s.slug != slug])
        for name, text, log_path in tails:
            report = analyze(text, index, log_path=log_path)
            slugs = [suggestion.slug for suggestion in report.suggestions]
            place = slugs.index(slug) + 1 if slug in slugs[:3] else 0
            places[place] += 1
            silent += not slugs
            sure_and_wrong = bool(slugs) and report.confident and slugs[0] != slug
            wrong_and_sure += sure_and_wrong
            if args.v and (sure_and_wrong or not place):
                sure = " (confident)" if sure_and_wrong else ""
                print(f"  {slug}: {name} -> {slugs[:3] or 'no suggestion'}{sure}")
    total = sum(places.values())
    kept = " (keeping other threads' example lines)" if args.keep_other_examples else ""
    print(f"{total} labelled tails, {len(by_label)} incidents, each without its signatures{kept}")
    print(f"top-1:                       {places[1]}/{total} = {places[1] / total:.3f}")
    top3 = places[1] + places[2] + places[3]
    print(f"top-3:                       {top3}/{total} = {top3 / total:.3f}")
    print(f"no suggestion at all:        {silent}")
    print(f"confident and wrong:         {wrong_and_sure}/{total} = {wrong_and_sure / total:.3f}")
    print(f"({time.perf_counter() - started:.0f} s: one index per incident)")


def _not_in(examples: tuple[str, ...], texts: list[str]) -> tuple[str, ...]:
    return tuple(line for line in examples if not any(line in text for text in texts))


if __name__ == "__main__":
    main()
