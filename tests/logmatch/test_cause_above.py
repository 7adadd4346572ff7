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


@pytest.mark.parametrize(
    ("tail", "line"),
    [
        (
            "Traceback (most recent call last):\n"
            '  File "/opt/app/train.py", line 40, in <module>\n'
            "    main()\n"
            '  File "/opt/app/train.py", line 31, in main\n',
            4,
        ),
        (
            "Traceback (most recent call last):\n"
            '  File "/opt/app/train.py", line 40, in <module>\n'
            "    main()\n\n",
            3,
        ),
        (
            "(VllmWorkerProcess pid=38) ERROR 09-23 19:56:34 [multiproc_worker_utils.py:238]   "
            'File "/env/site-packages/torch_npu/npu/utils.py", line 87, in current_device\n'
            "(VllmWorkerProcess pid=38) ERROR 09-23 19:56:34 [multiproc_worker_utils.py:238]     "
            "torch_npu.npu._lazy_init()\n",
            2,
        ),
    ],
)
def test_a_tail_cut_inside_a_traceback_points_below_itself(small_index, tail, line):
    report = analyze(tail, small_index)

    assert report.extra["cut_in_traceback"] == {"line": line}


@pytest.mark.parametrize(
    "tail",
    [
        "Traceback (most recent call last):\n"
        '  File "/opt/app/train.py", line 40, in <module>\n'
        "    main()\n"
        "ValueError: bad shape\n",
        '  File "/opt/app/train.py", line 40, in <module>\n'
        "    main()\n"
        "epoch 3 step 120 loss 2.31\n",
        # a message that ends by quoting the frame it failed in says what failed
        "E40021: Failed to compile Op [Add]. (oppath: [Compile /usr/local/Ascend/add.py failed "
        'with errormsg/stack: File "/usr/local/Ascend/te_fusion/fusion_manager.py", line 111\n',
    ],
)
def test_a_traceback_that_reaches_its_exception_gets_no_such_hint(small_index, tail):
    assert "cut_in_traceback" not in analyze(tail, small_index).extra
