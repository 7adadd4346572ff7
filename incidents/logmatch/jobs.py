"""Where a failure's cause was written, when the tail itself only reports the failure.

Kaldi's run.pl, queue.pl and slurm.pl (and their kin: ssh.pl, pbspro.pl …) end a step whose
jobs failed by naming the jobs' log, and what went wrong is in there, not in the recipe's
own output. Launchers, engines and build tools end with a line that only reports that
something before it failed (`Engine process failed to start`, `ChildFailedError`,
`make: *** … Error 2`): the cause is in the lines above. A tail that stops inside a Python
traceback, at a frame, was cut before the exception that ends it: the cause is in the lines
below. A tail that ends so explains nothing by itself: the page says where to look.
"""

from __future__ import annotations

from collections.abc import Sequence

import re2

from .generic import follows_frame, is_consequence, is_python_frame
from .types import Level, Line

_NAMES_JOB_LOG = re2.compile(r"\w\.pl: (?:job failed|\d+ / \d+ failed)\b.*\blog is in (\S+)\s*$")
_FILE_HEADER = re2.compile(r"^==> .+ <==\s*$")  # how `tail` heads each of several files
# Consequences whose cause is not in the lines above: a process killed by signal 9 (most often
# the kernel's OOM killer, which says so in dmesg), and a scheduler that names its reason on
# the same line.
_CAUSE_ELSEWHERE = re2.compile(
    r"(?:^|\s)Killed\s*$|\bSIGKILL\b|\bexit ?(?:code|status)\W{0,3}(?:-9|137)\b"
    r"|\bCANCELLED AT\b"
)
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


def cause_above(lines: Sequence[str], levels: Sequence[Level]) -> Line | None:
    """The tail's last error line, when it is near the end and only reports that something
    before it failed (a launcher's, an engine's or a build tool's summary), as (line, text)."""
    start = max(0, len(lines) - LOOK_BACK)
    for number in range(len(lines) - 1, start - 1, -1):
        line = lines[number]
        if levels[number] is not Level.ERROR or not any(c.isalpha() for c in line):
            continue  # a rule of `=` under the error is part of it
        if is_consequence(line) and not _CAUSE_ELSEWHERE.search(line):
            return Line(number + 1, line)
        return None
    return None


def cut_in_traceback(lines: Sequence[str]) -> Line | None:
    """The tail's last line, when it is a Python traceback's frame (`File "…", line N`) or the
    source line under one: the paste stops before the exception that ends the traceback."""
    number = len(lines) - 1
    while number >= 0 and not lines[number].strip():
        number -= 1
    if number < 0:
        return None
    line = lines[number]
    if is_python_frame(line) or (number > 0 and follows_frame(lines[number - 1], line)):
        return Line(number + 1, line)
    return None
