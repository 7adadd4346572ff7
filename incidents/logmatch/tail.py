"""A pasted tail as the ranking reads it: its lines, their levels and groups, its stage, and
what a line weighs as evidence (its level relative to the most severe line that says
something, its position, a flood) — and whether the input is a log at all or a few lines of
prose a person typed."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from .generic import follows_frame, is_generic
from .masking import mask_line
from .types import Group, Level

LEVEL_WEIGHT = {Level.ERROR: 1.0, Level.WARNING: 0.8, Level.INFO: 0.7}
GENERIC_WEIGHT = 0.25
DESCRIPTION_LINES = 5  # an input of at most this many lines of prose is a description
PROSE_SHARE = 0.7  # of a description line's tokens are plain words


@dataclass
class Tail:
    """The analysed lines of one log tail and what the engine learned about them."""

    lines: Sequence[str]
    levels: Sequence[Level]
    groups: Sequence[Group]
    line_groups: Sequence[int]
    stage: str | None
    flood_count: int
    stage_clear: bool = False  # the stage comes from the log path or a program of the stage
    telling_level: Level | None = field(init=False)  # the most severe line that says something
    level_scale: float = field(init=False)
    _templates: dict[int, str] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        # Levels weigh relative to the most severe level of a line that says something: in a
        # tail of INFO lines (a plain description, a metrics dump), or one whose only error
        # is a bare `Traceback`, an INFO line is the best evidence there is.
        self.telling_level = next(
            (
                level
                for level in (Level.ERROR, Level.WARNING, Level.INFO)
                if any(g.level is level and not is_generic(g.example) for g in self.groups)
            ),
            None,
        )
        self.level_scale = (
            1.0 / LEVEL_WEIGHT[self.telling_level] if self.telling_level is not None else 1.0
        )

    @functools.cached_property
    def is_description(self) -> bool:
        """A few lines of prose: typed by a person ("显存不足"), not pasted from a log."""
        written: list[str] = []
        for line in self.lines:
            if line.strip():
                written.append(line)
                if len(written) > DESCRIPTION_LINES:
                    return False
        return all(map(is_prose, written))

    def says_nothing(self, index: int) -> bool:
        """A generic line, or the source line a Python traceback prints under a frame."""
        line = self.lines[index]
        if not line.strip() or is_generic(line):
            return True
        return index > 0 and follows_frame(self.lines[index - 1], line)

    def template(self, index: int) -> str:
        if index not in self._templates:
            self._templates[index] = mask_line(self.lines[index])
        return self._templates[index]

    def flood_share(self, count: int) -> float:
        """How close `count` lines come to a flood, 0..1: `flood_count` of them, or most of
        what was pasted (a short tail of nothing but that warning is a flood too)."""
        written = self.written_lines
        return min(1.0, max(count / self.flood_count, count / written if written else 0.0))

    @functools.cached_property
    def written_lines(self) -> int:
        return sum(1 for line in self.lines if line.strip())

    def repeats(self, index: int) -> int:
        """How often the line's template occurs, if that makes it a flood; else 1."""
        if not self.groups:
            return 1
        group = self.groups[self.line_groups[index]]
        return group.count if group.count >= self.flood_count else 1

    def confirming_kinds(self) -> tuple[str, ...]:
        """In a log, only a signature, a symptom line, users' feedback, ranks shown waiting
        in different collectives (`mismatch_clues`) or pip offering only releases newer than
        a pin (`pin_clues`) confirm an incident; similar text ranks and hints. In a
        description, similar text is all there is."""
        if self.is_description:
            return ("signature", "symptom", "feedback", "similar")
        return ("signature", "symptom", "feedback", "mismatch", "pin")


_TOKEN_OF_PROSE = re.compile(r"[(\"“]?[A-Za-z][A-Za-z'’-]*[.,;:!?)\"”]*")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
_LOG_MARK = re.compile(
    r"\w(?:Error|Exception|Warning)\b|\b(?:ERROR|WARNING|WARN|INFO|FATAL)\b|\d:\d\d"
)


def is_table_row(line: str) -> bool:
    """A row or rule of a boxed table (nvidia-smi, npu-smi, a pretty-printed config): its
    words are column headings and values, which resemble any text that names the same tool."""
    line = line.strip()
    return len(line) > 1 and line[0] in "|+" and line[-1] in "|+"


def is_prose(line: str) -> bool:
    """Whether a line reads like a sentence a person typed, not a log line or a command:
    mostly plain words (or Chinese), no paths, flags or file names, no level marker or
    exception class."""
    if _LOG_MARK.search(line):
        return False
    if len(_CJK.findall(line)) >= 2:
        return True
    tokens = line.split()
    words = sum(1 for token in tokens if _TOKEN_OF_PROSE.fullmatch(token))
    return len(tokens) >= 3 and words >= PROSE_SHARE * len(tokens)


def line_weight(tail: Tail, index: int, generic: bool) -> float:
    level = min(1.0, LEVEL_WEIGHT[tail.levels[index]] * tail.level_scale)
    position = 0.8 + 0.2 * (index + 1) / max(1, len(tail.lines))
    repeats = tail.repeats(index)
    flood = 1.0 + 0.1 * math.log10(repeats) if repeats > 1 else 1.0
    return level * position * flood * (GENERIC_WEIGHT if generic else 1.0)
