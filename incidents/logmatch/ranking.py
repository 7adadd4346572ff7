"""Rank incidents by the evidence a tail holds for each, and say why the first one wins.

Every piece of evidence (a clue) is a line with a strength in 0..1, the product of:
  - what matched: a signature or symptom line, or similar text (its calibrated cosine, never
    worth a signature);
  - the line's level: ERROR > WARNING > INFO, relative to the most severe line that says
    something;
  - its position: later lines weigh a little more, the last error usually mattering most;
  - the signature's specificity: more literal text demands more and proves more;
  - a flood: a warning repeated `Limits.flood_count` times or more weighs more the more it
    repeats, and a signature that healthy logs show too counts fully only in a flood;
  - the generic-line guard: `Killed`, `exit code 1`, a bare `Traceback` prove nothing alone.
An incident scores its strongest clue plus a little for each further independent source,
times stage agreement and users' feedback, capped at 1. It is confident only when its
confirming evidence alone (a signature, a symptom line, feedback; in a typed description
also similar text) reaches `CONFIDENT`: anything less is shown as a lead, never as the answer.
"""

from __future__ import annotations

import functools
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from common.phrases import Phrase, gettext_noop

from .generic import follows_frame, is_generic
from .signatures import Hit
from .similarity import SimilarityIndex
from .templates import mask_line
from .trends import loss_trend
from .types import Evidence, Group, IncidentSpec, Level, Suggestion

CONFIDENT = 0.55
MIN_SCORE = 0.12  # weaker candidates are not shown at all
EVIDENCE_SHOWN = 5

LEVEL_WEIGHT = {Level.ERROR: 1.0, Level.WARNING: 0.8, Level.INFO: 0.7}
GENERIC_WEIGHT = 0.25
BENIGN_FLOOR = 0.3  # weight of one hit of a signature healthy logs show too; a flood: 1
STAGE_AGREES, STAGE_DIFFERS = 1.08, 0.92
FEEDBACK_WEIGHT = 0.35
CORROBORATION = 0.1  # per further independent source of evidence, at most three counted
# Cosines below the floor are noise; from the ceiling up, text is as close as text gets.
# Similar text never weighs as much as a signature hit: at best SIMILARITY_WEIGHT.
SIMILARITY_FLOOR, SIMILARITY_CEILING = 0.12, 0.42
SIMILARITY_WEIGHT = 0.85
SIMILARITY_QUERIES = 16
DESCRIPTION_LINES = 5  # an input of at most this many lines of prose is a description
LAST_LINES_ASKED = 3  # of a log with no warning or error line
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


@dataclass(frozen=True)
class Clue:
    """One evidence line for one incident, with the strength it lends."""

    line: int  # 0-based index into Tail.lines
    text: str
    kind: str  # signature | symptom | similar | trend | feedback
    signature: str | None
    level: Level
    strength: float
    generic: bool
    specificity: float = 0.0
    similarity: float = 0.0
    repeats: int = 1
    source: str = ""  # what found it: a signature key, or similar/feedback and the line
    seen: str = ""  # for a trend: what the numbers did (a Phrase)

    def evidence(self) -> Evidence:
        return Evidence(self.line + 1, self.text, self.signature, self.kind)


def signature_clues(tail: Tail, hits: Sequence[Hit]) -> dict[str, list[Clue]]:
    """A clue for each signature hit, at the last line it matched.

    A signature that healthy logs show too (a few retried utterances, the loss scaler's
    first overflows) proves something only on an error line or in volume: below a flood, its
    clue is discounted by how far it is from one.
    """
    volume: Counter[str] = Counter()
    for hit in hits:
        volume[hit.signature.key] += len(hit.lines)
    clues: dict[str, list[Clue]] = defaultdict(list)
    for hit in hits:
        index = hit.lines[-1]
        generic = is_generic(hit.text)
        specificity = hit.signature.specificity
        strength = _line_weight(tail, index, generic) * (0.65 + 0.35 * specificity)
        if hit.signature.benign_hits and tail.levels[index] is not Level.ERROR:
            strength *= BENIGN_FLOOR + (1.0 - BENIGN_FLOOR) * tail.flood_share(
                volume[hit.signature.key]
            )
        clues[hit.signature.slug].append(
            Clue(
                line=index,
                text=hit.text,
                kind=hit.signature.kind,
                signature=None if hit.signature.kind == "symptom" else hit.signature.key,
                level=tail.levels[index],
                strength=min(1.0, strength),
                generic=generic,
                specificity=specificity,
                repeats=tail.repeats(index),
                source=hit.signature.key,
            )
        )
    return clues


def similarity_clues(tail: Tail, index: SimilarityIndex) -> dict[str, list[Clue]]:
    """Clues from text similarity between the tail's key lines and each incident's text."""
    queries = similarity_queries(tail)
    clues: dict[str, list[Clue]] = defaultdict(list)
    for hit in index.best_matches([tail.lines[line] for line in queries], top=10):
        if hit.score < SIMILARITY_FLOOR:
            continue
        line = queries[hit.query]
        clues[index.slugs[hit.incident]].append(
            _similar_clue(tail, line, hit.score, kind="similar", source=f"similar:{line}")
        )
    return clues


def trend_clues(tail: Tail, index: SimilarityIndex) -> dict[str, list[Clue]]:
    """Clues from the tail's numbers: a training loss that is not coming down, matched by
    its wording against each incident's text. Only where no error line tells the story:
    next to one, a loss curve is background."""
    if tail.telling_level is Level.ERROR:
        return {}
    trend = loss_trend(tail.lines)
    if trend is None:
        return {}
    clues: dict[str, list[Clue]] = defaultdict(list)
    for hit in index.best_matches([trend.query], top=3):
        if hit.score >= SIMILARITY_FLOOR:
            clues[index.slugs[hit.incident]].append(
                _similar_clue(
                    tail, trend.line, hit.score, kind="trend", source="trend:loss", seen=trend.seen
                )
            )
    return clues


def _similar_clue(
    tail: Tail, line: int, cosine: float, *, kind: str, source: str, seen: str = ""
) -> Clue:
    calibrated = SIMILARITY_WEIGHT * min(
        1.0, (cosine - SIMILARITY_FLOOR) / (SIMILARITY_CEILING - SIMILARITY_FLOOR)
    )
    return Clue(
        line=line,
        text=tail.lines[line],
        kind=kind,
        signature=None,
        level=tail.levels[line],
        strength=min(1.0, calibrated * _line_weight(tail, line, generic=False)),
        generic=False,
        similarity=cosine,
        repeats=tail.repeats(line),
        source=source,
        seen=seen,
    )


def similarity_queries(tail: Tail) -> list[int]:
    """The lines worth comparing with the incidents' text: the latest distinct errors, then
    flooding warnings, then other warnings. In a description typed by a person ("显存不足",
    "WER up 2 points after a rerun") every line counts; in a log without any warning or
    error only its last few lines do, since healthy INFO lines would only add noise. Each
    group is asked once, through its last line; lines that say nothing are left out."""
    latest_first = sorted(tail.groups, key=lambda found: -found.last_line)
    chosen: list[int] = []

    def take(groups: Iterable[Group], limit: int) -> None:
        for found in groups:
            if len(chosen) >= limit:
                return
            index = found.last_line - 1
            if index in chosen or tail.says_nothing(index) or is_table_row(tail.lines[index]):
                continue
            chosen.append(index)

    def at(level: Level) -> list[Group]:
        return [found for found in latest_first if found.level is level]

    take(at(Level.ERROR), SIMILARITY_QUERIES)
    take((found for found in latest_first if found.flood), SIMILARITY_QUERIES)
    take(at(Level.WARNING), SIMILARITY_QUERIES if not chosen else len(chosen))
    if tail.is_description:
        take(latest_first, DESCRIPTION_LINES)
    elif not chosen:
        take(latest_first, LAST_LINES_ASKED)
    return sorted(chosen)


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


def _line_weight(tail: Tail, index: int, generic: bool) -> float:
    level = min(1.0, LEVEL_WEIGHT[tail.levels[index]] * tail.level_scale)
    position = 0.8 + 0.2 * (index + 1) / max(1, len(tail.lines))
    repeats = tail.repeats(index)
    flood = 1.0 + 0.1 * math.log10(repeats) if repeats > 1 else 1.0
    return level * position * flood * (GENERIC_WEIGHT if generic else 1.0)


@dataclass(frozen=True)
class _Candidate:
    slug: str
    raw: float  # the score before it is capped at 1: it orders candidates that both reach 1
    score: float
    confirmed: float  # the score from confirming evidence alone (see `_confident`)
    clues: tuple[Clue, ...]  # one per line, strongest first
    stage_factor: float
    feedback: float


def rank(
    tail: Tail,
    clues: Mapping[str, Sequence[Clue]],
    incidents: Mapping[str, IncidentSpec],
    feedback: Mapping[tuple[str, str], float] | None,
    top: int,
) -> tuple[Suggestion, ...]:
    """The `top` incidents by score, each with its evidence and why it beats the next one."""
    adjustments = _feedback_by_slug(tail, clues, feedback or {})
    candidates = []
    for slug, found in clues.items():
        incident = incidents.get(slug)
        if incident is None or not found:
            continue
        candidates.append(_score(tail, incident, found, adjustments.get(slug, 0.0)))
    candidates.sort(key=lambda candidate: (-candidate.raw, candidate.slug))
    shown = [candidate for candidate in candidates if candidate.score >= MIN_SCORE][:top]
    suggestions = []
    for position, candidate in enumerate(shown):
        runner_up = shown[position + 1] if position + 1 < len(shown) else None
        suggestions.append(
            Suggestion(
                slug=candidate.slug,
                title=incidents[candidate.slug].title,
                score=round(candidate.score, 3),
                confident=_confident(candidate),
                evidence=_evidence(candidate.clues),
                why=explain(tail, candidate, runner_up),
            )
        )
    return tuple(suggestions)


def _score(tail: Tail, incident: IncidentSpec, found: Sequence[Clue], adjust: float) -> _Candidate:
    """Strongest clue plus a little for each further independent source, times stage
    agreement and feedback; also the same from confirming clues only."""
    ordered = tuple(sorted(_one_per_line(found), key=lambda clue: (-clue.strength, -clue.line)))
    if tail.stage is None or incident.stage is None:
        stage_factor = 1.0
    else:
        stage_factor = STAGE_AGREES if incident.stage == tail.stage else STAGE_DIFFERS
    factor = stage_factor * (1.0 + FEEDBACK_WEIGHT * adjust)
    confirming = _confirming_kinds(tail)
    confirmed = [clue for clue in ordered if clue.kind in confirming and not clue.generic]
    raw = _combine(ordered) * factor
    return _Candidate(
        slug=incident.slug,
        raw=raw,
        score=_clip(raw),
        confirmed=_clip(_combine(confirmed) * factor),
        clues=ordered,
        stage_factor=stage_factor,
        feedback=adjust,
    )


def _combine(clues: Sequence[Clue]) -> float:
    """The strongest clue, plus CORROBORATION for each of the next three independent sources
    (another signature, another line of similar text): repeating one line is volume, which
    the flood weight already counts, not more proof."""
    best: dict[str, float] = {}
    for clue in clues:
        best[clue.source] = max(best.get(clue.source, 0.0), clue.strength)
    strengths = sorted(best.values(), reverse=True)
    if not strengths:
        return 0.0
    return strengths[0] + CORROBORATION * sum(strengths[1:4])


def _clip(score: float) -> float:
    return max(0.0, min(1.0, score))


def _one_per_line(found: Sequence[Clue]) -> list[Clue]:
    """One clue per line. Where a signature or symptom line matched, it speaks for the line;
    similar text on the same line adds nothing to it."""
    by_line: dict[int, list[Clue]] = defaultdict(list)
    for clue in found:
        by_line[clue.line].append(clue)
    merged = []
    for clues in by_line.values():
        matched = [clue for clue in clues if clue.kind in ("signature", "symptom")]
        merged.append(max(matched or clues, key=lambda clue: clue.strength))
    return merged


def _confirming_kinds(tail: Tail) -> tuple[str, ...]:
    """In a log, only a signature, a symptom line or users' feedback confirms an incident;
    similar text ranks and hints. In a description, similar text is all there is."""
    if tail.is_description:
        return ("signature", "symptom", "feedback", "similar")
    return ("signature", "symptom", "feedback")


def _confident(candidate: _Candidate) -> bool:
    """Confirming evidence alone, none of it a generic line, reaches the threshold, and users
    have not said it is not the fix."""
    return candidate.confirmed >= CONFIDENT and candidate.feedback > -0.5


def _evidence(clues: Sequence[Clue]) -> tuple[Evidence, ...]:
    return tuple(clue.evidence() for clue in clues[:EVIDENCE_SHOWN])


def _feedback_by_slug(
    tail: Tail, clues: Mapping[str, Sequence[Clue]], feedback: Mapping[tuple[str, str], float]
) -> dict[str, float]:
    """Sum the feedback recorded for (template, slug) over the templates of this tail's
    evidence lines, clipped to [-1, 1]. Every candidate looks at every evidence line: the
    key line a user judged may have been another incident's evidence."""
    if not feedback:
        return {}
    templates = {tail.template(clue.line) for found in clues.values() for clue in found}
    adjustments: dict[str, float] = {}
    for slug in clues:
        total = sum(feedback.get((template, slug), 0.0) for template in templates)
        if total:
            adjustments[slug] = max(-1.0, min(1.0, total))
    return adjustments


def feedback_clues(
    tail: Tail, feedback: Mapping[tuple[str, str], float] | None
) -> dict[str, list[Clue]]:
    """Clues for incidents that users confirmed as the fix for one of this tail's error or
    warning templates, so "this fixed it" teaches the engine even where no signature
    matches yet. Each group is looked at through its first and last line."""
    if not feedback:
        return {}
    by_template: dict[str, list[tuple[str, float]]] = defaultdict(list)
    for (template, slug), value in feedback.items():
        if value > 0:
            by_template[template].append((slug, value))
    clues: dict[str, list[Clue]] = defaultdict(list)
    for found in tail.groups:
        if found.level is Level.INFO:
            continue
        for index in {found.first_line - 1, found.last_line - 1}:
            for slug, value in by_template.get(tail.template(index), ()):
                generic = is_generic(tail.lines[index])
                strength = min(1.0, value) * 0.6 * _line_weight(tail, index, generic)
                clues[slug].append(
                    Clue(
                        line=index,
                        text=tail.lines[index],
                        kind="feedback",
                        signature=None,
                        level=tail.levels[index],
                        strength=strength,
                        generic=generic,
                        source=f"feedback:{tail.template(index)}",
                    )
                )
    return clues


def explain(tail: Tail, winner: _Candidate, runner_up: _Candidate | None) -> Phrase:
    """One sentence on why `winner` ranks above `runner_up`."""
    found = _describe(winner.clues[0])
    if runner_up is None:
        return Phrase(
            gettext_noop("%(found)s; no other incident has evidence in this tail."),
            sentence=True,
            found=found,
        )
    return Phrase(
        gettext_noop(
            "%(found)s, scoring %(score)s against %(other_score)s for %(other)s: %(reason)s."
        ),
        sentence=True,
        found=found,
        score=f"{winner.score:.2f}",
        other_score=f"{runner_up.score:.2f}",
        other=runner_up.slug,
        reason=_decisive_reason(tail, winner, runner_up),
    )


def _describe(clue: Clue) -> Phrase:
    where = (
        Phrase(
            gettext_noop("%(level)s line %(line)s, repeated %(repeats)s times"),
            level=clue.level.value,
            line=str(clue.line + 1),
            repeats=str(clue.repeats),
        )
        if clue.repeats > 1
        else Phrase(
            gettext_noop("%(level)s line %(line)s"), level=clue.level.value, line=str(clue.line + 1)
        )
    )
    if clue.kind == "signature":
        return Phrase(
            gettext_noop("signature %(signature)s matched %(where)s"),
            signature=str(clue.signature),
            where=where,
        )
    if clue.kind == "symptom":
        return Phrase(gettext_noop("its symptom line matched %(where)s"), where=where)
    if clue.kind == "feedback":
        return Phrase(gettext_noop("users confirmed it for %(where)s"), where=where)
    if clue.kind == "trend":
        return Phrase(
            gettext_noop("its symptom resembles the numbers up to %(where)s: %(seen)s"),
            where=where,
            seen=clue.seen,
        )
    return Phrase(
        gettext_noop("its text resembles %(where)s (similarity %(similarity)s)"),
        where=where,
        similarity=f"{clue.similarity:.2f}",
    )


def _decisive_reason(tail: Tail, winner: _Candidate, runner_up: _Candidate) -> Phrase:
    mine, theirs = winner.clues[0], runner_up.clues[0]
    if winner.feedback > 0 >= runner_up.feedback:
        return Phrase(gettext_noop("users marked it as the fix for these lines before"))
    if runner_up.feedback < 0 <= winner.feedback:
        return Phrase(
            gettext_noop("users marked %(other)s as not the fix for these lines"),
            other=runner_up.slug,
        )
    if theirs.generic and not mine.generic:
        return Phrase(
            gettext_noop("the runner-up only matched a generic line that proves nothing alone")
        )
    if mine.kind in ("signature", "symptom") and theirs.kind in ("similar", "trend"):
        return Phrase(
            gettext_noop("a signature matched, while the runner-up only has similar text")
        )
    if LEVEL_WEIGHT[mine.level] > LEVEL_WEIGHT[theirs.level]:
        return Phrase(
            gettext_noop("its evidence is an error line, the runner-up's best is %(theirs)s"),
            theirs=_describe(theirs),
        )
    if mine.repeats > theirs.repeats:
        return Phrase(
            gettext_noop("its evidence floods the log (%(repeats)s times)"),
            repeats=str(mine.repeats),
        )
    if mine.specificity > theirs.specificity + 0.1:
        return Phrase(gettext_noop("its signature is more specific (more literal text)"))
    if mine.line > theirs.line:
        return Phrase(
            gettext_noop(
                "its evidence comes later in the tail (line %(line)s, not %(other_line)s)"
            ),
            line=str(mine.line + 1),
            other_line=str(theirs.line + 1),
        )
    if winner.stage_factor > runner_up.stage_factor:
        return Phrase(
            gettext_noop("its stage agrees with the inferred stage (%(stage)s)"),
            stage=str(tail.stage),
        )
    if len(winner.clues) > len(runner_up.clues):
        return Phrase(
            gettext_noop("it has %(mine)s evidence lines against %(theirs)s"),
            mine=str(len(winner.clues)),
            theirs=str(len(runner_up.clues)),
        )
    if mine.similarity > theirs.similarity:
        return Phrase(gettext_noop("its text is closer to the lines"))
    return Phrase(gettext_noop("its evidence is stronger"))
