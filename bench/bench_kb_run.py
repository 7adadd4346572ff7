"""Overhead of `kb run` on a command that prints a lot: the same command bare and wrapped.

usage: .venv/bin/python bench/bench_kb_run.py [--gib 1] [--repeat 3]

The command prints GIB gibibytes of training-log lines on stdout, two ways: `yes LINE | head -c
N` (C speed: the worst case, nothing hides the wrapper's copying) and a Python loop that writes
the lines (as a training script's logging would). Bare, its output
goes straight to the sink; wrapped, `kb run` reads it from a pipe, writes it to the same sink
unchanged and keeps its tail. Two sinks: a file (as under sbatch, whose output is a file) and
/dev/null (the worst case for the wrapper: the bare command's writes cost nothing). The command
succeeds, so nothing is sent. Wall time, best of REPEAT runs each, printed as a ratio.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KB = Path(__file__).resolve().parent.parent / "kbcli" / "kb.py"
LINE = "epoch 3 step 120400 loss 2.3456 lr 3.0e-04 grad_norm 1.23 tokens/s 12345.6 mem 23.1GiB"


def best(command: list[str], sink: str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        with open(sink, "wb") as out:
            started = time.perf_counter()
            subprocess.run(command, stdout=out, check=True, env={**os.environ, "KB_TOKEN": ""})
            times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gib", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    size = int(args.gib * (1 << 30))
    python_loop = (
        f"import sys\nw = sys.stdout.write\nline = {LINE!r} + '\\n'\n"
        f"for _ in range({size} // len(line)): w(line)\n"
    )
    producers = {
        "yes | head": ["sh", "-c", f"yes '{LINE}' | head -c {size}"],
        "python": [sys.executable, "-c", python_loop],
    }
    with tempfile.TemporaryDirectory() as scratch:
        for producer, command in producers.items():
            wrapped = [sys.executable, str(KB), "run", "--", *command]
            for name, sink in [("a file", f"{scratch}/out.log"), ("/dev/null", os.devnull)]:
                bare = best(command, sink, args.repeat)
                kb = best(wrapped, sink, args.repeat)
                print(
                    f"{args.gib:g} GiB from {producer:10} to {name:9}  bare {bare:6.2f} s  "
                    f"kb run {kb:6.2f} s  overhead {100 * (kb / bare - 1):+5.1f} %"
                )


if __name__ == "__main__":
    main()
