"""What a tail's numbers say when none of its lines says what went wrong.

A training run whose loss will not come down prints no error to match: its numbers are the
evidence. `loss_trend(lines)` reads the training loss each line reports (the first `loss`
value of the line that is not a validation, dev or test loss) and, over the latest `WINDOW`
of them, tells a loss that stays flat, rises or swings without coming down from one that is
still falling. The observation is put in the words incidents use for such a symptom, so the
similarity index can find the incident that describes it; it is a lead, never proof.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import fmean

import re2

from common.phrases import Phrase, gettext_noop

WINDOW = 20  # latest loss values read
MIN_POINTS = 6  # fewer say nothing about a trend
STILL_FALLING = 0.02  # the latest third is this much lower than the first: all is well
FLAT = 0.002  # the whole window within this share of its level: a loss that does not move
RISING = 0.05  # the latest third this much higher than the first, and by half the swing

# `loss`, `train_loss`, `lm loss`, `'loss':` … then its value; group 1 is the word before.
# RE2 (linear on any line): what the look-arounds of `re` would say is checked on each match.
_LOSS = re2.compile(
    r"(?i)(?:^|[^\w.])(?:([a-z]+)[_ ])?loss\b['\"]?[ \t]*[:=]?[ \t]*(?:tensor\()?"
    r"([-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?)"
)
_NOT_TRAINING = {"val", "valid", "validation", "eval", "dev", "test"}


@dataclass(frozen=True)
class Trend:
    line: int  # 0-based index of the latest line that reported the loss
    query: str  # the symptom in the words incidents use, for the similarity index
    seen: Phrase  # what the numbers did, for people


def loss_trend(lines: Sequence[str]) -> Trend | None:
    """The training loss that is not coming down in `lines`, or None."""
    table = _table_losses(lines)
    if table and not math.isfinite(table[-1][1]):
        return _not_a_number(table)
    found = sorted(_losses(lines) + table)[-WINDOW:]
    if len(found) < MIN_POINTS:
        return None
    values = [value for _, value in found]
    third = max(2, len(values) // 3)
    first, latest = fmean(values[:third]), fmean(values[-third:])
    level = max(abs(first), 1e-12)
    if (first - latest) / level >= STILL_FALLING:
        return None
    points = str(len(values))
    if (max(values) - min(values)) / level <= FLAT:
        query = "the loss stays flat and does not converge"
        seen = Phrase(
            gettext_noop("the loss stays at %(value)s over the last %(points)s logged steps"),
            value=_number(latest),
            points=points,
        )
    elif latest - first >= max(RISING * level, (max(values) - min(values)) / 2):
        query = "the loss rises and diverges"
        seen = Phrase(
            gettext_noop("the loss rises from %(start)s to %(end)s over %(points)s logged steps"),
            start=_number(first),
            end=_number(latest),
            points=points,
        )
    else:
        query = "the loss oscillates and does not converge"
        seen = Phrase(
            gettext_noop(
                "the loss swings between %(low)s and %(high)s over %(points)s logged steps "
                "without coming down"
            ),
            low=_number(min(values)),
            high=_number(max(values)),
            points=points,
        )
    return Trend(line=found[-1][0], query=query, seen=seen)


def _not_a_number(table: list[tuple[int, float]]) -> Trend:
    """The latest rows of a loss table say nan or inf: the value, and for how many rows."""
    latest = table[-1]
    rows = 0
    for _, value in reversed(table):
        if math.isfinite(value):
            break
        rows += 1
    return Trend(
        line=latest[0],
        query="the loss becomes nan or inf",
        seen=Phrase(
            gettext_noop("the loss column reads %(value)s in the last %(rows)s logged rows"),
            value=str(latest[1]),
            rows=str(rows),
        ),
    )


def _table_losses(lines: Sequence[str]) -> list[tuple[int, float]]:
    """(line index, training loss) from a table of columns: a header of names, some of them
    losses (`Epoch  GPU_mem  box_loss  cls_loss  dfl_loss  Instances`), then rows of values
    under it; the losses of a row are summed, and nan or inf are kept. A header of another
    table (names only, no loss among them) ends it."""
    found: list[tuple[int, float]] = []
    columns: list[int] = []
    width = 0
    for number, line in enumerate(lines):
        if not columns and ("loss" not in line.lower() or any(map(str.isdigit, line))):
            continue  # no table open, and no header of one (names only): most lines
        tokens = line.split()
        if len(tokens) < 3:
            continue
        values = [_value(token) for token in tokens]
        if all(value is None for value in values):
            columns = [i for i, token in enumerate(tokens) if _is_training_loss(token)]
            width = len(tokens)
            continue
        if not columns or len(tokens) < width:
            continue
        row = [value for i in columns if (value := values[i]) is not None]
        if len(row) == len(columns):  # every loss column holds a number (nan and inf count)
            found.append((number, sum(row)))
    return found


def _is_training_loss(name: str) -> bool:
    words = name.lower().strip(":|,").split("_")
    return "loss" in words and words[0] not in _NOT_TRAINING


def _value(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


def _losses(lines: Sequence[str]) -> list[tuple[int, float]]:
    """(line index, training loss) for each line that reports a finite one."""
    found = []
    for number, line in enumerate(lines):
        if "loss" not in line.lower():
            continue
        for match in _LOSS.finditer(line):
            end = match.end(2)
            if end < len(line) and (line[end].isalnum() or line[end] in "._"):
                continue  # the number goes on: "loss=1x", "loss 0.5.3"
            if (match.group(1) or "").lower() in _NOT_TRAINING:
                continue
            value = float(match.group(2))
            if math.isfinite(value):
                found.append((number, value))
            break
    return found


def _number(value: float) -> str:
    return f"{value:.4g}"
