"""Why the first suggestion wins: one sentence naming its evidence and what decided against
the runner-up, as a translatable `Phrase`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from common.phrases import Phrase, gettext_noop

from .clues import (
    CONFIG_LEAD_REASON,
    DRIFT_LEAD_REASON,
    KILL_LEAD_REASON,
    MISMATCH_REASON,
    PIN_REASON,
    RECORD_LEAD_REASON,
    STAGE_LEAD_REASONS,
    Clue,
)
from .tail import LEVEL_WEIGHT, Tail

if TYPE_CHECKING:
    from .ranking import Candidate


def explain(tail: Tail, winner: Candidate, runner_up: Candidate | None) -> Phrase:
    """One sentence on why `winner` ranks above `runner_up`."""
    found = _found(winner)
    if runner_up is None:
        return Phrase(
            gettext_noop("%(found)s; no other incident has evidence in this tail."),
            sentence=True,
            found=found,
        )
    if winner.score < runner_up.score:
        # Ranked first on confirmed evidence over a lead that scores higher (see `rank`).
        message = gettext_noop(
            "%(found)s, scoring %(score)s, below %(other_score)s for %(other)s, yet first "
            "because its evidence confirms it: %(reason)s."
        )
    else:
        message = gettext_noop(
            "%(found)s, scoring %(score)s against %(other_score)s for %(other)s: %(reason)s."
        )
    return Phrase(
        message,
        sentence=True,
        found=found,
        score=_shown(winner.score),
        other_score=_shown(runner_up.score),
        other=runner_up.slug,
        reason=_decisive_reason(tail, winner, runner_up),
    )


def _shown(score: float) -> str:
    """A score as a sentence quotes it: from the suggestion's own rounded score, so that the
    two never read differently (0.94500001 is shown as 0.945, and quoted as 0.94)."""
    return f"{round(score, 3):.2f}"


def _found(winner: Candidate) -> Phrase:
    """The winner's strongest evidence; when that line has several usual causes, also the line
    that tells which of them it is (the evidence that makes it the answer)."""
    best = winner.clues[0]
    proof = next(
        (
            clue
            for clue in winner.clues
            if clue.kind in ("signature", "symptom") and not clue.lead_only and not clue.generic
        ),
        None,
    )
    if not best.lead_only or proof is None:
        return _describe(best)
    return Phrase(
        gettext_noop(
            "%(found)s, a line with several usual causes, and %(proof)s, which names the cause"
        ),
        found=_describe(best, as_lead=False),
        proof=_describe(proof),
    )


def _where(clue: Clue) -> Phrase:
    if clue.repeats > 1:
        return Phrase(
            gettext_noop("%(level)s line %(line)s, repeated %(repeats)s times"),
            level=clue.level.value,
            line=str(clue.line + 1),
            repeats=str(clue.repeats),
        )
    return Phrase(
        gettext_noop("%(level)s line %(line)s"), level=clue.level.value, line=str(clue.line + 1)
    )


def _describe(clue: Clue, *, as_lead: bool = True) -> Phrase:
    """What the clue is and where; a lead-only signature's hit says it is a lead unless
    `as_lead` is off (the caller says what else there is)."""
    where = _where(clue)
    if clue.kind == "signature":
        matched = (
            gettext_noop(
                "signature %(signature)s matched %(where)s, a line with several usual causes "
                "(a lead, not the answer)"
            )
            if clue.lead_only and as_lead
            else gettext_noop("signature %(signature)s matched %(where)s")
        )
        return Phrase(matched, signature=str(clue.signature), where=where)
    if clue.kind == "symptom":
        return Phrase(gettext_noop("its symptom line matched %(where)s"), where=where)
    if clue.kind == "feedback":
        return Phrase(gettext_noop("users confirmed it for %(where)s"), where=where)
    if clue.kind == "stage":
        return Phrase(STAGE_LEAD_REASONS[clue.seen], where=where)
    if clue.kind == "kill":
        return Phrase(KILL_LEAD_REASON, where=where)
    if clue.kind == "drift":
        return Phrase(DRIFT_LEAD_REASON, where=where)
    if clue.kind == "config":
        return Phrase(CONFIG_LEAD_REASON, where=where)
    if clue.kind == "record":
        return Phrase(RECORD_LEAD_REASON, where=where)
    if clue.kind == "mismatch":
        return Phrase(MISMATCH_REASON, where=where)
    if clue.kind == "pin":
        return Phrase(PIN_REASON, where=where)
    if clue.kind == "trend" and clue.source == "trend:repetition":
        return Phrase(
            gettext_noop("its symptom resembles the text of %(where)s: %(seen)s"),
            where=where,
            seen=clue.seen,
        )
    if clue.kind == "trend":
        return Phrase(
            gettext_noop("its symptom resembles the numbers up to %(where)s: %(seen)s"),
            where=where,
            seen=clue.seen,
        )
    resembling = (
        gettext_noop(
            "a line it was seen with before resembles %(where)s (similarity %(similarity)s)"
        )
        if clue.echo
        else gettext_noop("its text resembles %(where)s (similarity %(similarity)s)")
    )
    return Phrase(resembling, where=where, similarity=f"{clue.similarity:.2f}")


def _decisive_reason(tail: Tail, winner: Candidate, runner_up: Candidate) -> Phrase:
    mine, theirs = winner.clues[0], runner_up.clues[0]
    if winner.feedback > 0 >= runner_up.feedback:
        return Phrase(gettext_noop("users marked it as the fix for these lines before"))
    if runner_up.feedback < 0 <= winner.feedback:
        return Phrase(
            gettext_noop("users marked %(other)s as not the fix for these lines"),
            other=runner_up.slug,
        )
    if mine.kind == "pin" and runner_up.consequence:
        return Phrase(
            gettext_noop(
                "the numbers of pip's refusal say which refusal it is; the runner-up reads only "
                "its words"
            )
        )
    if runner_up.consequence and not winner.consequence:
        return Phrase(
            gettext_noop(
                "the runner-up's line only reports the failure, which another line explains"
            )
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
