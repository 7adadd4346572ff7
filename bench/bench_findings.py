"""What do the numbers-and-output findings cost? Ratios are measured in one run.

On a tail without an error line the engine reads the numbers (loss, step time, throughput,
TTFT, KV-cache usage) and looks for looping generated text. This times those readers
(`loss_trend`, `speed_trend`, `repetition`) against the whole analysis of the same tail: the
healthy reference logs cut to 2,000 lines (no finding, every line read) and a 2,000-line
training log whose step time grows (a finding, every line a metric line).

    .venv/bin/python bench/bench_findings.py [--repeat 15]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from incidents.catalog import engine_specs
from incidents.logmatch import analyze, build_index
from incidents.logmatch.benign import benign_lines
from incidents.logmatch.repetition import repetition
from incidents.logmatch.speed import speed_trend
from incidents.logmatch.trends import loss_trend

LINES = 2000


def median_ms(function: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def megatron_log() -> list[str]:
    return [
        f" iteration {n:8d}/ 50000 | consumed samples: {n * 256:12d} | elapsed time per iteration"
        f" (ms): {1400 + n * 0.5:.1f} | learning rate: 1.5E-04 | global batch size: 256 |"
        f" lm loss: {2.5 - n * 1e-4:.6E} | loss scale: 1.0 | grad norm: 0.31 |"
        for n in range(1, LINES + 1)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    index = build_index(*engine_specs())
    healthy = (benign_lines() * (LINES // max(1, len(benign_lines())) + 1))[:LINES]
    for name, lines in (("healthy reference logs", healthy), ("growing step time", megatron_log())):
        text = "\n".join(lines)
        whole = median_ms(lambda text=text: analyze(text, index), args.repeat)
        readers = {
            reader.__name__: median_ms(
                lambda reader=reader, lines=lines: reader(lines), args.repeat
            )
            for reader in (loss_trend, speed_trend, repetition)
        }
        print(f"{name} ({len(lines)} lines): whole analysis {whole:.1f} ms")
        for reader, spent in readers.items():
            print(f"  {reader:12} {spent:6.1f} ms  ({spent / whole:.0%} of the analysis)")
        added = readers["speed_trend"] + readers["repetition"]
        print(f"  speed + repetition: {added / whole:.0%} of the analysis")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
