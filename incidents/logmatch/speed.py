"""What a tail's speed numbers say: a run that gets slower prints no error to match.

`speed_trend(lines)` reads the time a step costs (`elapsed time per iteration (ms): 5361.6`,
`batch_cost: 0.59 s`, `1.20s/it`, `Time 0.470 (1.206)`, `time this epoch= 2.4`) and the
throughput a training run reports (`3521 samples/s`, `ips: 107.9 images/sec`,
`TFLOP/s/GPU): 243.6`, `MFU: 41.2`), turning a throughput into its inverse so that every
series is a cost: a cost that grows is a run slowing down. The time to the first token a
server reports is its own series, whose growth is a latency symptom, not a slow training;
so is its KV-cache usage, a finding when it ends nearly full and fuller than it started.
Each metric of each kind of line (its first word: tqdm's `Map`, `Epoch`, Megatron's
`iteration`) is its own series, so two progress bars are never compared with each other.
A throughput on a line that also counts requests depends on the load offered to a server,
not on its speed, and is not read; nor is a tqdm bar within its first second (a download).
Only the last `LINES_READ` lines are read, the end of a run being where it shows. Like the
loss trend, the finding is a lead, never proof.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import fmean

from common.phrases import Phrase, gettext_noop

from .trends import Trend

WINDOW = 20  # latest values of a series read
LINES_READ = 5000  # the last lines of a tail looked at: where a run's end shows
GROWTH = 1.25  # the latest third costs this much more than the first: slowing down
STEADY_GROWTH = 1.05  # enough when no value is ever lower than the one before it
MIN_STEADY_POINTS = 3
_NUMBER = r"(\d+(?:\.\d+)?(?:e[-+]?\d+)?)"


@dataclass(frozen=True)
class _Metric:
    """One way a log reports a number of a series. The pattern runs on the lower-cased line,
    only when the line holds `hint` and, if `also` names any, one of them; group 1 is the
    number. A line gives each `group` one value, from its first metric that matches: tqdm's
    `s/it` and `it/s` (it switches as the speed crosses 1) are one series. A "time" is a cost,
    a "rate" is inverted into one, a "level" is a share (0.98 or 98%)."""

    series: str
    group: str
    hint: str
    pattern: re.Pattern[str]
    kind: str
    also: tuple[str, ...] = ()


def _metric(
    series: str, group: str, hint: str, pattern: str, kind: str, also: tuple[str, ...] = ()
) -> _Metric:
    return _Metric(series, group, hint, re.compile(pattern), kind, also)


_STEP_WORDS = ("step", "iter", "batch")
# A pattern starts with a literal wherever it can (`re` then jumps from one occurrence to the
# next), and every repetition is bounded or comes after a literal or a separator: no line
# makes `re` backtrack more than a few steps per position. On a line that holds the hint,
# `re` costs less than one call into RE2.
_METRICS = (
    _metric(
        "step",
        "iteration",
        "elapsed time per iteration",
        r"elapsed time per iteration \(ms\): {0,3}" + _NUMBER,
        "time",
    ),
    _metric(
        "step",
        "step",
        "time",
        r"(?:step|iter|iteration|batch)[_ ]?time\b['\"]? {0,3}(?:\(m?s\))? {0,3}[:=]? {0,3}"
        + _NUMBER,
        "time",
        _STEP_WORDS,
    ),
    _metric(
        "step",
        "step",
        "cost",
        r"(?:step|iter|iteration|batch)[_ ]?cost\b['\"]? {0,3}[:=]? {0,3}" + _NUMBER,
        "time",
        _STEP_WORDS,
    ),
    _metric(
        "step",
        "step",
        "time",
        r"time[_ /](?:per[_ ])?(?:step|iter|iteration|batch)\b {0,3}[:=]? {0,3}" + _NUMBER,
        "time",
        _STEP_WORDS,
    ),
    _metric(
        "step",
        "tqdm",
        "s/",
        _NUMBER + r" ?(?:s|sec|secs|ms)/(?:it|step|iter|batch)\b",
        "time",
        ("s/it", "s/step", "s/iter", "s/batch"),
    ),
    _metric("step", "tqdm", "it/s", _NUMBER + r" ?it/s\b", "rate"),
    _metric("step", "elapse", "elapse", r"elapsed?: {0,3}" + _NUMBER + r" ?s\b", "time"),
    _metric(
        "step", "meter", "time", r"time:?[ \t]{1,3}" + _NUMBER + r"[ \t]{1,3}\(", "time", ("(",)
    ),
    _metric(
        "epoch",
        "epoch",
        "epoch",
        r"(?:time this epoch|epoch[_ ]time) {0,3}[:=]? {0,3}" + _NUMBER,
        "time",
        ("time",),
    ),
    _metric("epoch", "epoch", "s/epoch", _NUMBER + r" ?s/epoch\b", "time"),
    _metric(
        "throughput",
        "per-second",
        "/s",
        _NUMBER + r" ?(?:samples|tokens|tok|images|imgs|examples"
        r"|seqs|sequences|sentences|frames|utts|utterances)/s(?:ec)?\b",
        "rate",
    ),
    _metric(
        "throughput",
        "per-second",
        "per",
        r"(?:samples|tokens|images|examples|sequences)[_ ]per[_ ]sec(?:ond)?\b[^0-9|,]{0,12}"
        + _NUMBER,
        "rate",
        ("per sec", "per_sec"),
    ),
    _metric("throughput", "per-second", "ips:", r"ips: {0,3}" + _NUMBER, "rate"),
    _metric("throughput", "flops", "tflop", r"tflops?\b[^0-9|,]{0,24}" + _NUMBER, "rate"),
    _metric("throughput", "mfu", "mfu", r"mfu\b[^0-9|,]{0,6}" + _NUMBER, "rate"),
    _metric(
        "kv",
        "kv",
        "usage",
        r"(?:kv[ _-]?cache[ _]usage|token[ _]usage)\b {0,3}[:=]? {0,3}" + _NUMBER + r"(%?)",
        "level",
        ("cache", "token"),
    ),
    _metric("ttft", "ttft", "ttft", r"ttft\b[^0-9|,]{0,16}" + _NUMBER, "time"),
    _metric(
        "ttft",
        "ttft",
        "first",
        r"(?:time[_ ]to[_ ]first[_ ]token|first[_ ]token[_ ](?:latency|time))\b"
        r"[^0-9|,]{0,16}" + _NUMBER,
        "time",
        ("token",),
    ),
)
_LOAD = re.compile(r"\b(?:reqs|requests)\b")
_FIRST_WORD = re.compile(r"[a-z]{3,}")
_WORDS = {
    "step": (
        gettext_noop("the step time"),
        "training slows down: step time grows, throughput drops",
    ),
    "epoch": (gettext_noop("the epoch time"), "training slows down: each epoch takes longer"),
    "throughput": (
        gettext_noop("the time per sample (inverse throughput)"),
        "training slows down: throughput (samples/s, tokens/s, TFLOP/s) drops",
    ),
    "ttft": (
        gettext_noop("the time to first token"),
        "time to first token (TTFT) latency grows",
    ),
    "kv": (
        gettext_noop("the KV-cache usage"),
        "KV cache usage climbs until the cache is full",
    ),
}
FULL = 90.0  # a KV cache this full (%) at the end of a series that does not go down
# A tqdm bar within its first second (`[00:00<00:05, 3.2it/s]`, `8192it [00:00, 314226it/s]`):
# a rate measured over less than a second says little, and a bar that ends there (a download,
# a cache read) is no loop of the run's.
_FIRST_SECOND = "[00:00"


@dataclass(frozen=True)
class _Series:
    name: str
    points: list[tuple[int, float]]  # (line index, cost)


def speed_trend(lines: Sequence[str]) -> Trend | None:
    """The series in `lines` whose cost grows the most, or None when none grows."""
    best: tuple[float, _Series] | None = None
    for series in _series(lines):
        grows = _filling if series.name == "kv" else _growth
        ratio = grows(series.points[-WINDOW:])
        if ratio is not None and (best is None or ratio > best[0]):
            best = (ratio, series)
    if best is None:
        return None
    ratio, series = best
    points = series.points[-WINDOW:]
    what, query = _WORDS[series.name]
    seen = Phrase(
        gettext_noop("%(what)s grows %(ratio)s× over %(points)s logged values"),
        what=Phrase(what),
        ratio=f"{ratio:.2f}",
        points=str(len(points)),
    )
    return Trend(line=points[-1][0], query=query, seen=seen)


def _growth(points: Sequence[tuple[int, float]]) -> float | None:
    """How much more the latest third costs than the first, if that is a slowdown."""
    values = [value for _, value in points]
    if len(values) < 2:
        return None
    third = max(1, len(values) // 3)
    first, latest = fmean(values[:third]), fmean(values[-third:])
    ratio = latest / first
    if ratio >= GROWTH:
        return ratio
    steady = all(later >= earlier for earlier, later in pairwise(values))
    if len(values) >= MIN_STEADY_POINTS and steady and ratio >= STEADY_GROWTH:
        return ratio
    return None


def _filling(points: Sequence[tuple[int, float]]) -> float | None:
    """How much fuller the cache ends than it starts, if it ends nearly full."""
    values = [value for _, value in points]
    if len(values) < 2 or values[-1] < FULL or values[-1] <= values[0]:
        return None
    return values[-1] / max(values[0], 1.0)


def _inside_a_word(line: str, start: int) -> bool:
    """Whether a match starts inside a word or a number: "fips:", "runtime 3 (", "x2.5it/s"."""
    before = line[start - 1] if start else " "
    return line[start].isalnum() and (before.isalnum() or before in "._")


def _series(lines: Sequence[str]) -> list[_Series]:
    found: dict[tuple[str, str, str], list[tuple[int, float]]] = defaultdict(list)
    first_line = max(0, len(lines) - LINES_READ)
    for number in range(first_line, len(lines)):
        lowered = lines[number].lower()
        taken: set[str] = set()
        load: bool | None = None
        for metric in _METRICS:
            if metric.group in taken or metric.hint not in lowered:
                continue
            if metric.also and not any(word in lowered for word in metric.also):
                continue
            match = metric.pattern.search(lowered)
            if match is None or _inside_a_word(lowered, match.start()):
                continue
            if metric.group == "tqdm" and _FIRST_SECOND in lowered:
                continue
            if metric.series == "throughput":
                load = _LOAD.search(lowered) is not None if load is None else load
                if load:
                    continue
            value = float(match.group(1))
            if value <= 0:
                continue
            taken.add(metric.group)
            if metric.kind == "level":
                cost = value if match.group(2) or value > 1 else value * 100
            else:
                cost = 1.0 / value if metric.kind == "rate" else value
            first = _FIRST_WORD.search(lowered)
            found[(metric.series, metric.group, first.group(0) if first else "")].append(
                (number, cost)
            )
    return [_Series(name, points) for (name, _, _), points in found.items()]
