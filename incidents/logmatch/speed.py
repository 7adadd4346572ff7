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
not on its speed, and is not read. Like the loss trend, the finding is a lead, never proof.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from statistics import fmean

import re2

from common.phrases import Phrase, gettext_noop

from .trends import Trend

WINDOW = 20  # latest values of a series read
GROWTH = 1.25  # the latest third costs this much more than the first: slowing down
STEADY_GROWTH = 1.05  # enough when no value is ever lower than the one before it
MIN_STEADY_POINTS = 3
_NUMBER = r"(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)"
# (series, group, pattern with the number in group 1, how a value becomes a cost: a "time"
# is one, a "rate" is inverted). A line gives each group one value, from its first pattern
# that matches: tqdm's `s/it` and `it/s` (it switches as the speed crosses 1) are one series.
_METRICS: tuple[tuple[str, str, str, str], ...] = (
    ("step", "iteration", r"(?i)elapsed time per iteration \(ms\):\s*" + _NUMBER, "time"),
    (
        "step",
        "step",
        r"(?i)\b(?:step|iter|iteration|batch)[_ ]?(?:time|cost)\b['\"]?\s*(?:\(m?s\))?\s*[:=]?\s*"
        + _NUMBER,
        "time",
    ),
    (
        "step",
        "step",
        r"(?i)\btime[_ /](?:per[_ ])?(?:step|iter|iteration|batch)\b\s*[:=]?\s*" + _NUMBER,
        "time",
    ),
    (
        "step",
        "tqdm",
        r"(?i)(?:^|[\s,(\[|])" + _NUMBER + r"\s?(?:s|sec|secs|ms)/(?:it|step|iter|batch)\b",
        "time",
    ),
    ("step", "tqdm", r"(?i)(?:^|[\s,(\[|])" + _NUMBER + r"\s?it/s\b", "rate"),
    ("step", "elapse", r"(?i)\belapsed?:\s*" + _NUMBER + r"\s?s\b", "time"),
    ("step", "meter", r"\bTime:?\s+" + _NUMBER + r"\s+\(", "time"),
    ("epoch", "epoch", r"(?i)\b(?:time this epoch|epoch[_ ]time)\s*[:=]?\s*" + _NUMBER, "time"),
    ("epoch", "epoch", r"(?i)(?:^|[\s,(\[|-])" + _NUMBER + r"\s?s/epoch\b", "time"),
    (
        "throughput",
        "per-second",
        r"(?i)(?:^|[\s,(\[|:=])" + _NUMBER + r"\s?(?:samples|tokens|tok|images|imgs|examples"
        r"|seqs|sequences|sentences|frames|utts|utterances)/s(?:ec)?\b",
        "rate",
    ),
    (
        "throughput",
        "per-second",
        r"(?i)\b(?:samples|tokens|images|examples|sequences)[_ ]per[_ ]sec(?:ond)?\b[^0-9|,]{0,12}"
        + _NUMBER,
        "rate",
    ),
    ("throughput", "per-second", r"(?i)\bips:\s*" + _NUMBER, "rate"),
    ("throughput", "flops", r"(?i)\bTFLOPs?\b[^0-9|,]{0,24}" + _NUMBER, "rate"),
    ("throughput", "mfu", r"(?i)\bMFU\b[^0-9|,]{0,6}" + _NUMBER, "rate"),
    (
        "kv",
        "kv",
        r"(?i)\b(?:GPU |NPU )?(?:KV[ _-]?cache[ _]usage|token[ _]usage)\b\s*[:=]?\s*"
        + _NUMBER
        + r"(%?)",
        "level",
    ),
    (
        "ttft",
        "ttft",
        r"(?i)\b(?:TTFT|time[_ ]to[_ ]first[_ ]token|first[_ ]token[_ ](?:latency|time))\b"
        r"[^0-9|,]{0,16}" + _NUMBER,
        "time",
    ),
)
_COMPILED = tuple(
    (series, group, re2.compile(pattern), kind) for series, group, pattern, kind in _METRICS
)
_LOAD = re2.compile(r"(?i)\b(?:reqs|requests)\b")
_FIRST_WORD = re2.compile(r"[A-Za-z]{3,}")
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


def _series(lines: Sequence[str]) -> list[_Series]:
    found: dict[tuple[str, str, str], list[tuple[int, float]]] = defaultdict(list)
    for number, line in enumerate(lines):
        if not any(character.isdigit() for character in line):
            continue
        first = _FIRST_WORD.search(line)
        kind_of_line = first.group(0).lower() if first else ""
        load = _LOAD.search(line) is not None
        taken: set[str] = set()
        for series, group, pattern, kind in _COMPILED:
            if group in taken or (load and series == "throughput"):
                continue
            match = pattern.search(line)
            if match is None:
                continue
            value = float(match.group(1))
            if value <= 0:
                continue
            taken.add(group)
            if kind == "level":  # a share: 0.98 or 98%
                cost = value if match.group(2) or value > 1 else value * 100
            else:
                cost = 1.0 / value if kind == "rate" else value
            found[(series, group, kind_of_line)].append((number, cost))
    return [_Series(name, points) for (name, _, _), points in found.items()]
