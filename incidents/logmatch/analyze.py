"""One analysis of a log tail: read, redact, classify, group, match, rank; and its JSON form.

`build_index` compiles the knowledge base once (per knowledge version, cached by the caller);
`analyze` then runs in milliseconds per tail; `report_json` turns a report into JSON.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from .benign import benign_lines
from .clues import (
    Clue,
    config_clues,
    drift_clues,
    feedback_clues,
    kill_clues,
    last_cause,
    mismatch_clues,
    pin_clues,
    record_clues,
    signature_clues,
    similarity_clues,
    stage_clues,
    trend_clues,
)
from .jobs import cause_above, cut_in_traceback, failed_job_log
from .levels import classify
from .masking import mask_line
from .ranking import rank
from .reading import read_input
from .redact import redact
from .signatures import Hit, SignatureSet, build_signature_set
from .similarity import SimilarityIndex
from .stages import infer_stage_clearly
from .tail import Tail
from .templates import group
from .types import (
    IncidentSpec,
    Level,
    Limits,
    Line,
    Report,
    SignatureSpec,
    Suggestion,
)

DEFAULT_LIMITS = Limits()
MAX_ERRORS_LISTED = 200  # the last ones: the end of a tail is where a failure shows
_READS_THE_LINE = ("signature", "symptom", "kill")  # evidence kinds that read their line


@dataclass(frozen=True)
class KnowledgeIndex:
    """The compiled knowledge base: every incident, its signatures in one RE2 set, and the
    similarity vectors. Immutable; build a new one when the knowledge base changes."""

    incidents: Mapping[str, IncidentSpec]
    signatures: SignatureSet
    similarity: SimilarityIndex
    rejected: Mapping[str, str] = field(default_factory=dict)  # signature key -> reason

    @property
    def changes(self) -> int:
        """How many incidents changed since the whole book was compiled."""
        return self.similarity.changes

    def changed(
        self,
        incidents: Sequence[IncidentSpec],
        signatures: Iterable[SignatureSpec],
        removed: Iterable[str] = (),
    ) -> KnowledgeIndex:
        """This index with `incidents` filed or replaced, with all their `signatures`, and
        the `removed` slugs gone. Only what changed is compiled; the rest is shared."""
        removed = set(removed)
        slugs = [incident.slug for incident in incidents]
        part = build_signature_set(incidents, signatures, benign_lines())
        by_slug = {slug: spec for slug, spec in self.incidents.items() if slug not in removed}
        by_slug.update(zip(slugs, incidents, strict=True))
        return KnowledgeIndex(
            incidents=by_slug,
            signatures=self.signatures.changed(part, slugs, removed),
            similarity=self.similarity.changed(incidents, removed),
            rejected={**self.rejected, **part.rejected},
        )


def build_index(
    incidents: Iterable[IncidentSpec], signatures: Iterable[SignatureSpec]
) -> KnowledgeIndex:
    """Compile the knowledge base. Never raises for a bad pattern: it is skipped, and
    `KnowledgeIndex.rejected[key]` says why. Signatures are also run over the benign
    reference corpus once, so that the ranking knows which ones healthy logs show too."""
    by_slug = {incident.slug: incident for incident in incidents}
    ordered = list(by_slug.values())
    signature_set = build_signature_set(ordered, signatures, benign_lines())
    return KnowledgeIndex(
        incidents=by_slug,
        signatures=signature_set,
        similarity=SimilarityIndex(ordered),
        rejected=dict(signature_set.rejected),
    )


def analyze(
    data: bytes | str,
    index: KnowledgeIndex | None,
    *,
    log_path: str | None = None,
    feedback: Mapping[tuple[str, str], float] | None = None,
    limits: Limits = DEFAULT_LIMITS,
    redacted: bool = False,
) -> Report:
    """Analyse one pasted tail. Without an index, only reading and grouping are done.

    Raises the `InputError` subclasses (`EmptyInput`, `InputTooLarge`, `BinaryInput`) for
    input it refuses; their messages are meant for the person who pasted the log. Secrets
    are redacted first, unless the caller says the text is `redacted` already.
    """
    read = read_input(data, limits)
    lines, redactions = (list(read.lines), 0) if redacted else _redact_lines(read.lines)
    levels = classify(lines)
    groups, line_groups = group(lines, levels, limits)
    stage, stage_reason, stage_clear = infer_stage_clearly(lines, log_path)
    tail = Tail(lines, levels, groups, line_groups, stage, limits.flood_count, stage_clear)

    suggestions: tuple[Suggestion, ...] = ()
    if index is not None:
        hits, ruled_out = index.signatures.scan_ruling(lines)
        clues = _merge(
            signature_clues(tail, hits),
            _without_lines(similarity_clues(tail, index.similarity, hits), ruled_out),
            trend_clues(tail, index.similarity),
            feedback_clues(tail, feedback),
            mismatch_clues(tail, index.incidents),
            pin_clues(tail, index.incidents),
        )
        clues = _merge(clues, stage_clues(tail, clues, index.incidents))
        clues = _merge(clues, kill_clues(tail, clues, index.incidents))
        clues = _merge(clues, drift_clues(tail, clues, index.incidents))
        clues = _merge(clues, config_clues(tail, clues, index.incidents))
        clues = _merge(clues, record_clues(tail, clues, index.incidents))
        suggestions = rank(tail, clues, index.incidents, feedback, limits.top)

    key = _key_line(tail, suggestions)
    return Report(
        stage=stage,
        stage_reason=stage_reason,
        levels=_level_counts(levels),
        groups=groups,
        line_groups=line_groups,
        errors=_last_errors(lines, levels),
        suggestions=suggestions,
        key_line=key,
        key_template=mask_line(key.text) if key else "",
        line_count=len(lines),
        invalid_bytes=read.invalid_bytes,
        cut_lines=read.cut_lines,
        redactions=redactions,
        extra={
            "floods": [number for number, found in enumerate(groups) if found.flood],
            **_where_the_cause_is(lines, levels),
        },
    )


def _where_the_cause_is(lines: Sequence[str], levels: Sequence[Level]) -> dict[str, object]:
    """The failed jobs' log a tail names, or else the line that only reports an earlier
    failure, whose cause is above it, or else the traceback frame the tail stops at, whose
    exception is below it."""
    if named := failed_job_log(lines):
        return {"job_log": {"line": named.number, "path": named.text}}
    if summary := cause_above(lines, levels):
        return {"cause_above": {"line": summary.number}}
    if frame := cut_in_traceback(lines):
        return {"cut_in_traceback": {"line": frame.number}}
    return {}


def _last_errors(lines: Sequence[str], levels: Sequence[Level]) -> tuple[Line, ...]:
    """The last MAX_ERRORS_LISTED error lines (the end of a tail is where a failure shows)."""
    wanted: list[int] = []
    for number in range(len(levels) - 1, -1, -1):
        if levels[number] is Level.ERROR:
            wanted.append(number)
            if len(wanted) == MAX_ERRORS_LISTED:
                break
    return tuple(Line(number + 1, lines[number]) for number in reversed(wanted))


def _redact_lines(lines: Sequence[str]) -> tuple[list[str], int]:
    text, count = redact("\n".join(lines))
    if not count:
        return list(lines), 0
    redacted = text.split("\n")
    if len(redacted) != len(lines):  # redaction keeps lines; never trust that blindly
        pairs = [redact(line) for line in lines]
        return [line for line, _ in pairs], sum(found for _, found in pairs)
    return redacted, count


def _without_lines(
    clues: Mapping[str, Sequence[Clue]], ruled_out: Sequence[Hit]
) -> dict[str, list[Clue]]:
    """The clues, less those on a line that a ruled-out signature of the same incident
    recognises: where a counter-pattern says the tail is not that incident, the line's
    resemblance to the incident's text says nothing more."""
    barred = {(hit.signature.slug, line) for hit in ruled_out for line in hit.lines}
    return {
        slug: [clue for clue in found if (slug, clue.line) not in barred]
        for slug, found in clues.items()
    }


def _merge(*sources: Mapping[str, Sequence[Clue]]) -> dict[str, list[Clue]]:
    merged: dict[str, list[Clue]] = defaultdict(list)
    for source in sources:
        for slug, clues in source.items():
            merged[slug].extend(clues)
    return merged


def _level_counts(levels: Sequence[Level]) -> dict[str, int]:
    counts = Counter(levels)
    return {level.value: counts[level] for level in Level}


def _key_line(tail: Tail, suggestions: Sequence[Suggestion]) -> Line | None:
    """The line that best explains the failure: the top suggestion's strongest evidence when
    it is confident, or when it read an error line itself (a signature, a kill) rather than
    resembling one; else the error line that explains the others (`last_cause`: passing over
    the lines that only report another line's failure, make's targets, a job's exit code);
    else the last warning."""
    if suggestions and suggestions[0].evidence:
        strongest = suggestions[0].evidence[0]
        read_itself = (
            strongest.kind in _READS_THE_LINE and tail.levels[strongest.line - 1] is Level.ERROR
        )
        if suggestions[0].confident or read_itself:
            return Line(strongest.line, strongest.text)
    for wanted in (Level.ERROR, Level.WARNING):
        found = [i for i, level in enumerate(tail.levels) if level is wanted]
        if found:
            number = last_cause(tail, found)
            if number is None:
                number = found[-1]
            return Line(number + 1, tail.lines[number])
    return None
