"""The plain data that crosses the boundary between the engine and the rest of the product.

Everything here is a frozen dataclass or an exception: Django builds the inputs from its
models, the engine returns a Report, and nobody on either side shares mutable state.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from common.phrases import Phrase, gettext_noop


class Level(StrEnum):
    INFO = "INFO"
    WARNING = "WARNING"
    ERROR = "ERROR"


class InputError(ValueError):
    """Input the engine refuses, with a message (a `Phrase`) meant for the person who pasted it."""


class InputTooLarge(InputError):
    def __init__(self, size: int, limit: int):
        self.size, self.limit = size, limit
        super().__init__(
            Phrase(
                gettext_noop(
                    "The log is %(size)s bytes; the limit is %(limit)s bytes. "
                    "Paste the last lines only."
                ),
                size=f"{size:,}",
                limit=f"{limit:,}",
            )
        )


class EmptyInput(InputError):
    def __init__(self) -> None:
        super().__init__(Phrase(gettext_noop("The log is empty: paste at least one line.")))


class BinaryInput(InputError):
    def __init__(self) -> None:
        super().__init__(Phrase(gettext_noop("This looks like a binary file, not a text log.")))


@dataclass(frozen=True)
class Limits:
    max_bytes: int = 2 * 1024 * 1024  # whole input
    max_line_chars: int = 4096  # longer lines are cut (and counted)
    flood_count: int = 20  # a warning template seen this often is a flood
    top: int = 5  # suggestions returned


@dataclass(frozen=True)
class IncidentSpec:
    """One incident of the knowledge base, as the engine needs it."""

    slug: str
    title: str
    stage: str | None  # build / data / train / serve
    symptom: str  # verbatim log line(s); each line also acts as a signature, masked
    description: str = ""  # free text (root cause, remedy, tags, other language) for similarity
    stage_lead: bool = False  # offered as a lead when a tail clearly of its stage matches nothing
    kill_lead: bool = False  # offered as a lead when a tail ends in a bare `Killed`, nothing else
    drift_lead: bool = (
        False  # offered when an API error is raised inside library code, nothing else
    )
    config_lead: bool = (
        False  # offered when the job's own code misses a key or attribute of its config
    )
    mismatch_lead: bool = False  # proved when ranks wait in different collectives at one step
    record_lead: bool = False  # offered when code misses a field in one record of its data
    pin_lead: bool = False  # proved when pip offers only releases newer than a pinned one
    # Real log lines its signatures were written from: each is a passage for similarity, so a
    # wording no expression knows can still resemble the lines the incident was seen with.
    examples: tuple[str, ...] = ()


@dataclass(frozen=True)
class SignatureSpec:
    key: str  # stable id the caller understands, e.g. "42" (the database id)
    slug: str  # the incident it points to
    pattern: str  # RE2 syntax
    unless: str = ""  # RE2: where any line of the tail matches it, the signature does not count
    # The line has several usual causes: a hit ranks the incident, never makes it the answer.
    lead_only: bool = False


@dataclass(frozen=True)
class Line:
    number: int  # 1-based, in the input as read
    text: str


@dataclass(slots=True)
class Group:
    """A template and the lines it stands for. Not frozen: a tail of many distinct lines
    makes one per line, and a frozen dataclass is made several times slower."""

    template: str  # variable tokens masked as <*>
    level: Level
    count: int
    first_line: int
    last_line: int
    example: str  # the first line of the group, verbatim
    flood: bool = False


@dataclass(frozen=True)
class Evidence:
    line: int
    text: str
    signature: str | None = None  # SignatureSpec.key, or None for symptom/similarity evidence
    kind: str = "signature"  # signature | symptom | similar | trend | feedback | stage | kill


@dataclass(frozen=True)
class Suggestion:
    slug: str
    title: str
    score: float  # 0..1
    confident: bool
    evidence: tuple[Evidence, ...]
    why: str = ""  # why it beats the runner-up, in one sentence (a Phrase)


@dataclass(frozen=True)
class Report:
    stage: str | None
    stage_reason: str  # the evidence for the stage (a Phrase), "" when unknown
    levels: dict[str, int]
    groups: tuple[Group, ...]
    line_groups: tuple[int, ...]  # index into groups for every input line
    errors: tuple[Line, ...]  # ERROR lines, in order (capped)
    suggestions: tuple[Suggestion, ...]
    key_line: Line | None  # the line that best explains the failure (for gaps)
    key_template: str  # its template: how unexplained tails are grouped
    line_count: int
    invalid_bytes: int = 0
    cut_lines: int = 0
    redactions: int = 0
    extra: dict[str, object] = field(default_factory=dict)

    @property
    def confident(self) -> bool:
        return bool(self.suggestions) and self.suggestions[0].confident
