"""Where a parallel step's failed jobs wrote their cause.

Kaldi's run.pl, queue.pl and slurm.pl (and their kin: ssh.pl, pbspro.pl …) end a step whose
jobs failed by naming the jobs' log, and what went wrong is in there, not in the recipe's
own output. A tail that ends so explains nothing by itself: the page says where to look.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from .types import Line

_NAMES_JOB_LOG = re2.compile(r"\w\.pl: (?:job failed|\d+ / \d+ failed)\b.*\blog is in (\S+)\s*$")
_FILE_HEADER = re2.compile(r"^==> .+ <==\s*$")  # how `tail` heads each of several files
LOOK_BACK = 20


def failed_job_log(lines: Sequence[str]) -> Line | None:
    """The log that the tail's last lines name as its failed jobs', as (line, path), when
    that log's own lines do not follow it (as `kb run` sends them, under a `==> … <==`)."""
    start = max(0, len(lines) - LOOK_BACK)
    for number in range(len(lines) - 1, start - 1, -1):
        if _FILE_HEADER.match(lines[number]):
            return None
        if "log is in" in lines[number] and (found := _NAMES_JOB_LOG.search(lines[number])):
            return Line(number + 1, found.group(1))
    return None
