"""Hostile pastes: the whole analysis of adversarial shapes within the 2 MiB cap, against
10,000 signatures. Target: every shape ≤ 1 s; the worst one is named.

Shapes: long runs of one character or token (on one line, or on lines at the line cap),
separators repeated, the prefixes of secrets and hostnames repeated, near-misses of every
signature family (lines dense in the knowledge base's vocabulary), many distinct error lines,
200k short lines. Each shape is analysed twice (cold: the first sight of its lines, then warm)
and its cost is printed next to an ordinary 2,000-line training tail analysed in the same run.

    .venv/bin/python bench/bench_hostile.py [--signatures 10000] [--size 2097152] [--profile]
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import pstats
import random
import string
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_engine import knowledge, realistic_tail
from incidents.logmatch import Limits, analyze, build_index

TARGET_SECONDS = 1.0
LINE = 4000  # a line just under the line cap


def _fill(unit: str, size: int) -> str:
    return (unit * (size // max(1, len(unit)) + 1))[:size]


def _lines(unit: str, size: int) -> str:
    line = _fill(unit, LINE)
    return "\n".join([line] * max(1, size // (LINE + 1)))


def shapes(size: int, vocabulary: list[str]) -> dict[str, str]:
    rng = random.Random(5)
    found: dict[str, str] = {}
    units = [
        *("a", " ", "\t", "0", "1.", ".", "-", "=", ":", "/", "[", "(", '"', "'", "%", "#"),
        *("ERROR a.", "loss=1", "sk-", "x.com.", 'File "', "0x1", "Error", "E1234 ", "a:b:"),
        *("Traceback ", "WARNING ", "at a.b(", "显存", "é", "AKIA", "password=", "://a:"),
    ]
    for unit in units:
        found[f"one line of {unit!r}"] = _fill(unit, size)
        found[f"lines of {unit!r}"] = _lines(unit, size)
    found["loss=111…x"] = "\n".join(["loss=" + "1" * (LINE - 6) + "x"] * (size // LINE))
    found["spaces then File"] = "\n".join([" " * (LINE - 6) + 'File "'] * (size // LINE))
    found["distinct ERROR a.b.c"] = "\n".join(
        "ERROR " + ".".join(rng.choice(string.ascii_lowercase) for _ in range(LINE // 2 - 4))
        for _ in range(size // LINE)
    )
    found["vocabulary lines"] = "\n".join(
        " ".join(rng.choice(vocabulary) for _ in range(LINE // 12))[:LINE]
        for _ in range(size // LINE)
    )
    found["200k short lines"] = "\n".join(f"E{n} x" for n in range(size // 10))
    found["distinct short errors"] = "\n".join(
        "ERROR " + "".join(rng.choices(string.ascii_letters, k=20)) for _ in range(size // 27)
    )
    return {name: text for name, text in found.items() if text.strip()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--signatures", type=int, default=10_000)
    parser.add_argument("--size", type=int, default=2 * 1024 * 1024 - 1024)
    parser.add_argument("--only", default="", help="only shapes whose name contains this")
    parser.add_argument("--profile", action="store_true", help="profile the worst shape")
    args = parser.parse_args()

    incidents, signatures = knowledge(args.signatures)
    started = time.perf_counter()
    index = build_index(incidents, signatures)
    print(f"index of {args.signatures:,} signatures built in {time.perf_counter() - started:.1f} s")
    vocabulary = sorted(
        {word for spec in signatures for word in spec.pattern.split() if word.isalpha()}
    )
    limits = Limits(max_bytes=args.size + 1024)

    baseline_tail = realistic_tail()
    analyze(baseline_tail, index)
    started = time.perf_counter()
    analyze(baseline_tail, index)
    baseline = time.perf_counter() - started
    print(f"baseline: an ordinary 2,000-line tail in {baseline * 1000:.1f} ms\n")

    results = []
    for name, text in shapes(args.size, vocabulary).items():
        if args.only not in name:
            continue
        timings = []
        for _ in range(2):
            started = time.perf_counter()
            with contextlib.suppress(ValueError):  # refused in words: that took no time
                analyze(text, index, limits=limits)
            timings.append(time.perf_counter() - started)
        results.append((max(timings), min(timings), name, text))
        print(
            f"{max(timings):7.3f} s cold {min(timings):7.3f} s warm  ×{max(timings) / baseline:6.0f}  {name}"
        )

    worst = max(results)
    verdict = "ok" if worst[0] <= TARGET_SECONDS else "OVER the target"
    print(
        f"\nworst: {worst[2]!r} in {worst[0]:.3f} s cold (target ≤ {TARGET_SECONDS} s): {verdict}"
    )
    if args.profile:
        profile = cProfile.Profile()
        profile.enable()
        with contextlib.suppress(ValueError):
            analyze(worst[3], index, limits=limits)
        profile.disable()
        pstats.Stats(profile).sort_stats("cumulative").print_stats(15)


if __name__ == "__main__":
    main()
