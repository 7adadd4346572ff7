"""What `kb watch` takes for a log that ended in failure (plain function, no server)."""

import pytest

from kbcli.kb import log_failure
from tests.kbcli.test_kb_watch import ALIGN_FAILED, ALIGN_OK, SLURM_CANCELLED, STILL_RUNNING

TRACEBACK_LAST = """\
step 10 loss 2.1
[rank0]: Traceback (most recent call last):
[rank0]:   File "train.py", line 211, in <module>
[rank0]:     loss.backward()
[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
"""
TRACEBACK_HANDLED = """\
Traceback (most recent call last):
  File "data.py", line 3, in <module>
ValueError: bad utterance, skipped
step 11 loss 2.0
"""


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (ALIGN_OK.format(n=1), (False, 0)),
        (ALIGN_FAILED, (True, 1)),
        (STILL_RUNNING, (False, None)),
        (SLURM_CANCELLED, (True, None)),
        ("step 3\nslurmstepd: error: Detected 1 oom-kill event(s) in StepId=42.0.\n", (True, None)),
        (TRACEBACK_LAST, (True, None)),
        (TRACEBACK_HANDLED, (False, None)),
    ],
    ids=[
        "kaldi-ok",
        "kaldi-failed",
        "running",
        "slurm-time-limit",
        "slurm-oom",
        "traceback-last",
        "traceback-handled",
    ],
)
def test_it_tells_a_log_that_ended_in_failure(text, expected):
    assert log_failure(text) == expected
