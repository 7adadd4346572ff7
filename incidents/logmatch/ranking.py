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
confirming evidence alone (a signature, a symptom line, feedback, ranks shown waiting in
different collectives; in a typed description also similar text) reaches `CONFIDENT`
(`CONFIDENT_ACROSS_STAGES` for an incident of another stage than the one the tail clearly
comes from), and, when it rests on similar text alone, the
next incident resembles the text clearly less: anything less is shown as a lead, never as
the answer. Where a line only reports the failure (a job cancelled, an exit code) and another
line explains it, the explanation ranks first; so does the cause an error line quotes after
a colon (`failed to load 'm' version 1: … out of memory`), and an earlier line that explains
a missing input (`cp: cannot stat`, the fallout of the step that failed), and the numbers
of a line before another incident's reading of its words (pip refusing a pin older than every
release it offers); where a tail clearly of one stage matches nothing, the stage's usual
failure is offered as a lead.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from .clues import Clue
from .explain import explain
from .generic import is_consequence, is_fallout
from .prefilter import compiled
from .tail import Tail
from .types import Evidence, IncidentSpec, Level, Suggestion

CONFIDENT = 0.55
CONFIDENT_ACROSS_STAGES = 0.65  # an incident of another stage than the tail's clear one
MIN_SCORE = 0.03  # weaker candidates are not shown at all (a log's faint leads are just above)
EVIDENCE_SHOWN = 5
STAGE_AGREES, STAGE_DIFFERS = 1.08, 0.92
# An incident whose best evidence is a consequence line (a job cancelled, a process killed,
# an exit code) weighs this much less when another line confirms another incident: the line
# that explains the failure ranks first.
CONSEQUENCE_FACTOR = 0.6
# A build's report of the step a bare `Killed` ended weighs less still: it explains nothing.
KILLED_STEP_FACTOR = CONSEQUENCE_FACTOR**2
# So does another incident's reading of the words of a line whose numbers prove an incident
# (pip refusing `torch==1.4.0` while it offers only 1.11.0: no missing release, an old pin).
WORDING_FACTOR = CONSEQUENCE_FACTOR**2
FEEDBACK_WEIGHT = 0.35
CORROBORATION = 0.1  # per further independent source of evidence, at most three counted
# Text that only resembles a line another incident's signature recognises scores at most
# this share of that incident's score (see `_signature_before_likeness`).
LIKENESS_BELOW = 0.95
# Two incidents with the same score from the same line (one error text that two incidents
# both claim) are told apart by the tail's stage; with no stage, by the stage whose logs
# name it least: serving engines and build tools print their names on almost every line,
# so a tail with no stage cue is more likely a training or data script's.
TIE_ORDER = {"train": 0, "data": 1, "build": 2, "serve": 3}
# An answer that rests on similar text alone (a typed description) is the answer only when
# the next incident resembles the text clearly less: at most this share of its score. Two
# incidents that read alike are two leads (a host's memory and a card's, a hub that is down
# and one that is gated), however close the first one reads.
SIMILAR_MARGIN = 0.6


@dataclass(frozen=True)
class Candidate:
    slug: str
    raw: float  # the score before it is capped at 1: it orders candidates that both reach 1
    score: float
    confirmed: float  # the score from confirming evidence alone (see `_confident`)
    clues: tuple[Clue, ...]  # one per line, strongest first
    stage_factor: float
    feedback: float
    consequence: bool = False  # its best clue only reports a failure another line explains
    stage: str | None = None  # the incident's own stage


def rank(
    tail: Tail,
    clues: Mapping[str, Sequence[Clue]],
    incidents: Mapping[str, IncidentSpec],
    feedback: Mapping[tuple[str, str], float] | None,
    top: int,
) -> tuple[Suggestion, ...]:
    """The `top` incidents, each with its evidence and why it beats the next one: those whose
    confirming evidence makes them an answer (`_confident`) first, before a lead that scores
    higher, then by score."""
    adjustments = _feedback_by_slug(tail, clues, feedback or {})
    candidates = []
    for slug, found in clues.items():
        incident = incidents.get(slug)
        if incident is None or not found:
            continue
        candidates.append(_score(tail, incident, found, adjustments.get(slug, 0.0)))
    candidates = _cause_before_consequence(tail, candidates)
    candidates = _cause_within_line(candidates)
    candidates = _cause_before_fallout(tail, candidates)
    candidates = _signature_before_likeness(tail, candidates)
    candidates = _numbers_before_wording(candidates)
    candidates.sort(
        key=lambda candidate: (
            not _confident(tail, candidate),
            -candidate.raw,
            TIE_ORDER.get(candidate.stage or "", 4),
            candidate.slug,
        )
    )
    shown = [candidate for candidate in candidates if candidate.score >= MIN_SCORE][:top]
    suggestions = []
    for position, candidate in enumerate(shown):
        runner_up = shown[position + 1] if position + 1 < len(shown) else None
        suggestions.append(
            Suggestion(
                slug=candidate.slug,
                title=incidents[candidate.slug].title,
                score=round(candidate.score, 3),
                confident=_confident(tail, candidate)
                and not _tied(candidate, runner_up)
                and not _alike(tail, candidate, runner_up),
                evidence=_evidence(candidate.clues),
                why=explain(tail, candidate, runner_up),
            )
        )
    return tuple(suggestions)


def _score(tail: Tail, incident: IncidentSpec, found: Sequence[Clue], adjust: float) -> Candidate:
    """Strongest clue plus a little for each further independent source, times stage
    agreement and feedback; also the same from confirming clues only."""
    ordered = tuple(sorted(_one_per_line(found), key=lambda clue: (-clue.strength, -clue.line)))
    if tail.stage is None or incident.stage is None:
        stage_factor = 1.0
    else:
        stage_factor = STAGE_AGREES if incident.stage == tail.stage else STAGE_DIFFERS
    factor = stage_factor * (1.0 + FEEDBACK_WEIGHT * adjust)
    confirming = tail.confirming_kinds()
    confirmed = [
        clue
        for clue in ordered
        if clue.kind in confirming and not clue.generic and not clue.lead_only
    ]
    raw = _combine(ordered) * factor
    return Candidate(
        slug=incident.slug,
        raw=raw,
        score=_clip(raw),
        confirmed=_clip(_combine(confirmed) * factor),
        clues=ordered,
        stage_factor=stage_factor,
        feedback=adjust,
        stage=incident.stage,
    )


def _cause_before_consequence(tail: Tail, candidates: list[Candidate]) -> list[Candidate]:
    """Candidates whose best clue only reports the failure (`is_consequence`) weigh less
    when a confirming clue of another incident, on a line that is not itself a consequence,
    explains it: `Detected 1 oom-kill event` beside `*** JOB … CANCELLED` (schedulers print
    the explanation before or after the cancellation)."""
    confirming = tail.confirming_kinds()

    def names_a_cause(clue: Clue) -> bool:
        return (
            clue.kind in confirming
            and not clue.generic
            and not clue.lead_only
            and not is_consequence(clue.text)
        )

    def reports(candidate: Candidate) -> bool:
        """Its best clue reports the failure and none of its other clues names the cause: an
        engine that died (the consequence) and its illegal memory access (the cause) both
        recognised by one incident are that incident's cause."""
        return is_consequence(candidate.clues[0].text) and not any(
            names_a_cause(clue) for clue in candidate.clues[1:]
        )

    explained = any(
        candidate.clues[0].kind in confirming
        and not candidate.clues[0].generic
        and not reports(candidate)
        for candidate in candidates
    )
    if not explained:
        return _killed_step_reported(candidates)
    return [_demoted(candidate) if reports(candidate) else candidate for candidate in candidates]


def _killed_step_reported(candidates: list[Candidate]) -> list[Candidate]:
    """Where a bare `Killed` is followed only by the build reporting its step failed (a kill
    lead), the candidates whose every clue is one of those reports weigh KILLED_STEP_FACTOR:
    the kill is the cause, CMake's `Error generating file` for the killed nvcc call is not."""
    kills = [c.clues[0].line for c in candidates if c.clues[0].kind == "kill"]
    if not kills:
        return candidates

    def reports_the_kill(candidate: Candidate) -> bool:
        return all(clue.line > kills[0] and is_consequence(clue.text) for clue in candidate.clues)

    return [
        _demoted(candidate, KILLED_STEP_FACTOR) if reports_the_kill(candidate) else candidate
        for candidate in candidates
    ]


def _cause_within_line(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates whose best clue is an error line that goes on, after a colon, to what
    another incident's signature recognises weigh less: the line wraps that failure. A server that
    `failed to load 'llama' version 1: Internal: … CUDA out of memory`, an engine whose
    `initialization failed: …`, a build step that failed `: nvcc fatal …` each report the
    cause they quote; the cause is the answer."""
    # Only a candidate's best line can wrap, and only an error line: where each pattern matches
    # is looked up on those few lines alone.
    lines = {
        candidate.clues[0].line
        for candidate in candidates
        if candidate.clues[0].level is Level.ERROR and not candidate.consequence
    }
    found: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for candidate in candidates:
        for clue in candidate.clues:
            start = _match_start(clue) if clue.line in lines else None
            if start is not None:
                found[clue.line].append((candidate.slug, start))

    def wraps(candidate: Candidate) -> bool:
        best = candidate.clues[0]
        if best.line not in lines or candidate.consequence:
            return False
        start = _match_start(best)
        return start is not None and any(
            slug != candidate.slug and other > start and ":" in best.text[start:other]
            for slug, other in found[best.line]
        )

    return [_demoted(candidate) if wraps(candidate) else candidate for candidate in candidates]


def _match_start(clue: Clue) -> int | None:
    """Where the pattern that found a signature or symptom clue matches in its line."""
    if clue.kind not in ("signature", "symptom") or clue.generic or not clue.pattern:
        return None
    match = compiled(clue.pattern).search(clue.text)
    return match.start() if match else None


def _cause_before_fallout(tail: Tail, candidates: list[Candidate]) -> list[Candidate]:
    """Candidates whose best clue says an expected input is missing (`is_fallout`) weigh
    less when another incident, confirmed on its own (`CONFIDENT`) by an earlier line that is
    neither fallout nor a consequence, explains it: a recipe whose `utils/` links are broken
    goes on to `cp: cannot stat 'data/lang'`, a job that ran out of memory leaves no
    checkpoint. A stray warning before the missing file explains nothing."""
    confirming = tail.confirming_kinds()

    def explains(candidate: Candidate) -> int | None:
        best = candidate.clues[0]
        telling = best.kind in confirming and not best.generic
        telling = telling and candidate.confirmed >= CONFIDENT
        if telling and not is_fallout(best.text) and not is_consequence(best.text):
            return best.line
        return None

    causes = [line for line in map(explains, candidates) if line is not None]
    if not causes:
        return candidates
    first = min(causes)
    return [
        _demoted(candidate)
        if not candidate.consequence
        and is_fallout(candidate.clues[0].text)
        and candidate.clues[0].line > first
        else candidate
        for candidate in candidates
    ]


def _signature_before_likeness(tail: Tail, candidates: list[Candidate]) -> list[Candidate]:
    """A candidate whose best clue is only text resembling a line (similar text, a trend, a
    stage lead) ranks below an incident whose signature recognises that very line: the line
    says what it is (`Too many open files. … set_sharing_strategy('file_system')` is a
    file-descriptor limit, however much it reads like a shared-memory message). Its score is
    held just under that incident's; below it, nothing changes."""
    confirming = tail.confirming_kinds()
    recognised: dict[int, float] = {}
    owner: dict[int, set[str]] = defaultdict(set)
    read: dict[int, float] = {}
    trend_owner: dict[int, set[str]] = defaultdict(set)
    for candidate in candidates:
        for clue in candidate.clues:
            if clue.kind in ("signature", "symptom") and not clue.generic:
                owner[clue.line].add(candidate.slug)
                recognised[clue.line] = min(recognised.get(clue.line, 2.0), candidate.raw)

    for candidate in candidates:  # numbers read off a line tell more than its wording
        for clue in candidate.clues:
            if clue.kind == "trend" and clue.line not in recognised:
                trend_owner[clue.line].add(candidate.slug)
                read[clue.line] = min(read.get(clue.line, 2.0), candidate.raw)

    def held(candidate: Candidate) -> Candidate:
        best = candidate.clues[0]
        if best.kind == "similar" and trend_owner.get(best.line, set()) - {candidate.slug}:
            ceiling = read[best.line] * LIKENESS_BELOW
        elif best.kind in confirming or not owner.get(best.line, set()) - {candidate.slug}:
            return candidate
        else:
            ceiling = recognised[best.line] * LIKENESS_BELOW
        if candidate.raw <= ceiling:
            return candidate
        return replace(
            candidate,
            raw=ceiling,
            score=_clip(ceiling),
            confirmed=min(candidate.confirmed, ceiling),
        )

    return [held(candidate) for candidate in candidates]


def _numbers_before_wording(candidates: list[Candidate]) -> list[Candidate]:
    """Where the numbers of a line prove an incident (`pin_clues`: every release pip offers is
    newer than the pin it refuses), another incident whose signature only reads that line's
    words (`Could not find a version that satisfies the requirement`) weighs WORDING_FACTOR:
    the words fit any refused pin, the numbers say which refusal it is."""
    proven = {
        clue.line for candidate in candidates for clue in candidate.clues if clue.kind == "pin"
    }
    if not proven:
        return candidates

    def reads_the_words(candidate: Candidate) -> bool:
        kinds = {clue.kind for clue in candidate.clues}
        return "pin" not in kinds and any(
            clue.kind in ("signature", "symptom") and clue.line in proven
            for clue in candidate.clues
        )

    return [
        _demoted(candidate, WORDING_FACTOR) if reads_the_words(candidate) else candidate
        for candidate in candidates
    ]


def _demoted(candidate: Candidate, factor: float = CONSEQUENCE_FACTOR) -> Candidate:
    return replace(
        candidate,
        raw=candidate.raw * factor,
        score=_clip(candidate.raw * factor),
        confirmed=candidate.confirmed * factor,
        consequence=True,
    )


def _combine(clues: Sequence[Clue]) -> float:
    """The strongest clue, plus CORROBORATION for each of the next three independent sources
    (another signature, another line of similar text; a faint one is no proof, nor a line
    like an example line of the incident's signatures, which echoes them): repeating one
    line is volume, which the flood weight already counts, not more proof."""
    best: dict[str, Clue] = {}
    for clue in clues:
        if clue.source not in best or clue.strength > best[clue.source].strength:
            best[clue.source] = clue
    ordered = sorted(best.values(), key=lambda clue: -clue.strength)
    if not ordered:
        return 0.0
    corroborating = [clue.strength for clue in ordered[1:] if not clue.faint and not clue.echo][:3]
    return ordered[0].strength + CORROBORATION * sum(corroborating)


def _clip(score: float) -> float:
    return max(0.0, min(1.0, score))


def _one_per_line(found: Sequence[Clue]) -> list[Clue]:
    """One clue per line. Where a signature or symptom line matched, it speaks for the line;
    similar text on the same line adds nothing to it. A clue that confirms speaks before a
    stronger lead on the same line (a frame path an error message quotes)."""
    by_line: dict[int, list[Clue]] = defaultdict(list)
    for clue in found:
        by_line[clue.line].append(clue)
    merged = []
    for clues in by_line.values():
        matched = [clue for clue in clues if clue.kind in ("signature", "symptom")]
        merged.append(max(matched or clues, key=lambda clue: (not clue.lead_only, clue.strength)))
    return merged


def _confident(tail: Tail, candidate: Candidate) -> bool:
    """Confirming evidence alone, none of it a generic line, reaches the threshold (higher
    for an incident of another stage than the tail clearly comes from), and users have not
    said it is not the fix."""
    threshold = CONFIDENT
    if tail.stage_clear and candidate.stage_factor < 1.0:
        threshold = CONFIDENT_ACROSS_STAGES
    return candidate.confirmed >= threshold and candidate.feedback > -0.5


def _tied(candidate: Candidate, runner_up: Candidate | None) -> bool:
    """The runner-up has the same score from the same line: the line alone cannot say which
    of the two it is, so neither is the answer (the order only follows `TIE_ORDER`)."""
    if runner_up is None or abs(candidate.raw - runner_up.raw) > 1e-9:
        return False
    return candidate.clues[0].line == runner_up.clues[0].line


def _alike(tail: Tail, candidate: Candidate, runner_up: Candidate | None) -> bool:
    """The answer rests on similar text alone and the runner-up resembles the text nearly as
    well (`SIMILAR_MARGIN`): similarity can rank the two, not tell them apart."""
    if runner_up is None:
        return False
    proof = [clue for clue in candidate.clues if clue.kind in tail.confirming_kinds()]
    if not proof or any(clue.kind != "similar" for clue in proof):
        return False
    return runner_up.raw > SIMILAR_MARGIN * candidate.raw


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
