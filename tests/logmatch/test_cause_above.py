"""A tail that ends in a line that only reports an earlier failure: the cause is above it."""

from __future__ import annotations

import pytest

from incidents.logmatch import analyze


@pytest.mark.parametrize(
    ("tail", "line"),
    [
        ("loading weights\nRuntimeError: Engine process failed to start\n", 2),
        (
            "[ 40%] Building CXX object src/CMakeFiles/k2.dir/k2.cc.o\n"
            "make[2]: *** [src/CMakeFiles/k2.dir/build.make:76: k2.cc.o] Error 1\n"
            "make: *** [Makefile:136: all] Error 2\n",
            3,
        ),
        (
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
            "============================================================\n",
            1,
        ),
    ],
)
def test_a_summary_of_an_earlier_failure_points_above_itself(small_index, tail, line):
    report = analyze(tail, small_index)

    assert report.extra["cause_above"] == {"line": line}


@pytest.mark.parametrize(
    "tail",
    [
        "epoch 3 step 120\nKilled\n",  # the OOM killer's reason is in dmesg, not above
        "subprocess.CalledProcessError: Command '['python', 'prep.py']' returned non-zero "
        "exit status -9.\n",
        "make: *** [Makefile:12: all] Error 137\nERROR: process exited with exit code 137\n",
        "slurmstepd: error: *** JOB 4242 ON node7 CANCELLED AT 2024-05-01T10:00:00 ***\n",
        "RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB\n",  # it says why itself
        # the failed jobs' log is named: the page points there instead
        "run.pl: 3 / 12 failed, log is in exp/tri2_ali/log/align.*.log\n",
    ],
)
def test_a_line_that_says_why_or_points_elsewhere_gets_no_such_hint(small_index, tail):
    assert "cause_above" not in analyze(tail, small_index).extra
