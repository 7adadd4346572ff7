"""Overhead of `kb run` on a command that prints a lot: the same command bare and wrapped.

usage: .venv/bin/python bench/bench_kb_run.py [--gib 1] [--repeat 3]

The command prints GIB gibibytes of training-log lines on stdout, two ways: `yes LINE | head -c
N` (C speed: the worst case, nothing hides the wrapper's copying) and a Python loop that writes
the lines (as a training script's logging would). Bare, its output
goes straight to the sink; wrapped, `kb run` reads it from a pipe, writes it to the same sink
unchanged and keeps its tail. Two sinks: a file (as under sbatch, whose output is a file) and
/dev/null (the worst case for the wrapper: the bare command's writes cost nothing). The command
succeeds, so nothing is sent. Wall time and CPU time (user + system, of every process), best
of REPEAT alternating runs each, printed with the overhead. On a shared machine the wall time
is noisy; the CPU time says what kb itself costs.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

KB = Path(__file__).resolve().parent.parent / "kbcli" / "kb.py"
LINE = "epoch 3 step 120400 loss 2.3456 lr 3.0e-04 grad_norm 1.23 tokens/s 12345.6 mem 23.1GiB"


def run_once(command: list[str], sink: str) -> tuple[float, float]:
    """Wall time, and CPU time (user + system) of the command and everything it started."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    with open(sink, "wb") as out:
        started = time.perf_counter()
        subprocess.run(command, stdout=out, check=True, env={**os.environ, "KB_TOKEN": ""})
        wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def compare(bare: list[str], wrapped: list[str], sink: str, repeat: int) -> dict[str, float]:
    """Best of `repeat`, bare and wrapped runs alternating so that a machine busy with other
    work slows both alike."""
    times: dict[str, list[tuple[float, float]]] = {"bare": [], "kb": []}
    for _ in range(repeat):
        times["bare"].append(run_once(bare, sink))
        times["kb"].append(run_once(wrapped, sink))
    return {
        f"{name}_{kind}": min(run[index] for run in runs)
        for name, runs in times.items()
        for index, kind in enumerate(("wall", "cpu"))
    }


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
                t = compare(command, wrapped, sink, args.repeat)
                print(
                    f"{args.gib:g} GiB from {producer:10} to {name:9}  "
                    f"wall: bare {t['bare_wall']:6.2f} s, kb run {t['kb_wall']:6.2f} s "
                    f"({100 * (t['kb_wall'] / t['bare_wall'] - 1):+5.1f} %)  "
                    f"cpu: bare {t['bare_cpu']:6.2f} s, kb run {t['kb_cpu']:6.2f} s "
                    f"({100 * (t['kb_cpu'] / t['bare_cpu'] - 1):+5.1f} %)"
                )


if __name__ == "__main__":
    main()
