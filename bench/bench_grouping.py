"""Template grouping benchmark: Group Accuracy on Loghub-2k and throughput, ours vs drain3.

usage: .venv/bin/python bench/bench_grouping.py LOGHUB_DIR [TAILS_DIR]

LOGHUB_DIR is the Loghub-2k data set: one folder per system holding
`<system>_2k.log_structured.csv`. For each of its 16 systems the `Content` column is grouped
by `incidents.logmatch.templates.group` and by `drain3.TemplateMiner()` with its default
configuration, fed the same lines in the same run. Group Accuracy is the standard metric of
Zhu et al. 2019. Throughput is lines per second of pure grouping on one core (best of 3 runs
for ours; drain3 runs once, it is slow). Then, when TAILS_DIR (a folder of ML failure tails,
`*.log`, e.g. tests/logmatch/cases) is given, a sanity check: the repeated groups of each file.
"""

from __future__ import annotations

import argparse
import csv
import os
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from incidents.logmatch.digits import ALL_DIGITS, str_keys  # noqa: E402
from incidents.logmatch.levels import classify  # noqa: E402
from incidents.logmatch.reading import read_input  # noqa: E402
from incidents.logmatch.templates import group  # noqa: E402
from incidents.logmatch.types import Level  # noqa: E402


def group_accuracy(gt: list[str], pred: list) -> float:
    """Group Accuracy: share of lines whose predicted group equals their true group exactly."""
    size = Counter(gt)
    groups = defaultdict(list)
    for i, p in enumerate(pred):
        groups[p].append(i)
    ok = 0
    for idxs in groups.values():
        labels = {gt[i] for i in idxs}
        if len(labels) == 1 and size[next(iter(labels))] == len(idxs):
            ok += len(idxs)
    return ok / len(gt)


def load_loghub(root: Path) -> dict[str, tuple[list[str], list[str]]]:
    systems = {}
    for name in sorted(os.listdir(root)):
        path = root / name / f"{name}_2k.log_structured.csv"
        if path.is_file():
            with path.open(newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
            systems[name] = ([r["Content"] for r in rows], [r["EventId"] for r in rows])
    return systems


def ours(lines: list[str]) -> tuple[list[int], float, int]:
    levels = [Level.INFO] * len(lines)
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        groups, line_groups = group(lines, levels)
        best = min(best, time.perf_counter() - start)
    return list(line_groups), best, len(groups)


def drain(lines: list[str]) -> tuple[list[int], float, int]:
    from drain3 import TemplateMiner

    miner = TemplateMiner()
    start = time.perf_counter()
    pred = [miner.add_log_message(line)["cluster_id"] for line in lines]
    return pred, time.perf_counter() - start, len(miner.drain.clusters)


def loghub_table(root: Path) -> None:
    import logging

    logging.getLogger("drain3").setLevel(logging.ERROR)
    systems = load_loghub(root)
    if not systems:
        print(f"no Loghub-2k data under {root}")
        return
    print(
        f"{'system':12s} {'ours GA':>8s} {'drain3 GA':>10s} {'ours groups':>12s} "
        f"{'drain3 groups':>14s} {'true':>6s}"
    )
    total = {"ours": [0.0, 0.0], "drain": [0.0, 0.0]}  # GA sum, seconds
    n_lines = 0
    for name, (lines, truth) in systems.items():
        pred_o, t_o, g_o = ours(lines)
        pred_d, t_d, g_d = drain(lines)
        ga_o, ga_d = group_accuracy(truth, pred_o), group_accuracy(truth, pred_d)
        total["ours"][0] += ga_o
        total["ours"][1] += t_o
        total["drain"][0] += ga_d
        total["drain"][1] += t_d
        n_lines += len(lines)
        print(f"{name:12s} {ga_o:8.3f} {ga_d:10.3f} {g_o:12d} {g_d:14d} {len(set(truth)):6d}")
    k = len(systems)
    print(f"{'average':12s} {total['ours'][0] / k:8.3f} {total['drain'][0] / k:10.3f}")
    speed_o = n_lines / total["ours"][1]
    speed_d = n_lines / total["drain"][1]
    print(
        f"\nthroughput over {n_lines:,} lines: ours {speed_o:,.0f} lines/s, "
        f"drain3 {speed_d:,.0f} lines/s (ours x{speed_o / speed_d:.1f})"
    )
    # Repeated lines, and lines that differ only in their digits, are masked once; the honest
    # floor is a text where no two lines share even their digit key.
    distinct = list(dict.fromkeys(line for lines, _truth in systems.values() for line in lines))
    _pred, seconds, _groups = ours(distinct)
    print(
        f"throughput over the {len(distinct):,} distinct lines only: ours "
        f"{len(distinct) / seconds:,.0f} lines/s"
    )
    by_key = dict(zip(str_keys(distinct, ALL_DIGITS), distinct, strict=True))
    shapes = list(by_key.values())
    _pred, seconds, _groups = ours(shapes)
    print(
        f"throughput over the {len(shapes):,} lines with distinct digit keys (nothing shared): "
        f"ours {len(shapes) / seconds:,.0f} lines/s"
    )


def flood_check() -> None:
    line = (
        "WARNING (gmm-align-compiled[5.5]:AlignUtteranceWrapper():align-utils.cc:93) "
        "Retrying utterance spk1-utt{} with beam 40"
    )
    lines = [line.format(i) for i in range(100_000)]
    levels = classify(lines)
    start = time.perf_counter()
    groups, _ = group(lines, levels)
    elapsed = time.perf_counter() - start
    g = groups[0]
    print(
        f"\n100,000 Kaldi retry warnings: {len(groups)} group(s), count {g.count}, "
        f"flood={g.flood}, {elapsed * 1000:.0f} ms ({len(lines) / elapsed:,.0f} lines/s)"
    )


def tails_check(folder: Path) -> None:
    files = sorted(folder.glob("*.log"))
    if not files:
        return
    print(f"\nML failure tails in {folder}: repeated groups (count > 1)")
    n_lines, seconds = 0, 0.0
    for path in files:
        lines = read_input(path.read_bytes()).lines
        levels = classify(lines)
        start = time.perf_counter()
        groups, _ = group(lines, levels)
        seconds += time.perf_counter() - start
        n_lines += len(lines)
        repeated = [g for g in groups if g.count > 1]
        print(f"  {path.name}: {len(lines)} lines -> {len(groups)} groups")
        for g in repeated:
            flood = " FLOOD" if g.flood else ""
            print(f"      x{g.count:<3d} {g.level.value:7s}{flood} {g.template[:110]}")
    print(f"  {n_lines} lines grouped in {seconds * 1000:.1f} ms")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("loghub", type=Path, metavar="LOGHUB_DIR", help="the Loghub-2k data set")
    parser.add_argument(
        "tails", type=Path, nargs="?", metavar="TAILS_DIR", help="a folder of failure tails"
    )
    args = parser.parse_args()
    loghub_table(args.loghub)
    flood_check()
    if args.tails:
        tails_check(args.tails)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
