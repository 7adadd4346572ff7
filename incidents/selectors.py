"""Reads of the incident book, named for the pages and endpoints that use them."""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass

import re2
from django.conf import settings
from django.db.models import QuerySet, Sum
from django.shortcuts import get_object_or_404
from django.utils.translation import get_language

from common.cache import cache_get, cache_set
from common.history import HistoryEntry, history_entries
from common.keyset import count_up_to
from common.numbers import whole_number
from common.translation import phrase_text
from incidents import logmatch
from incidents.catalog import tag_name_normalized
from incidents.knowledge import knowledge_current, knowledge_state, signature_pk
from incidents.logmatch.patterns import compile_error, re2_options
from incidents.logmatch.prefilter import compiled
from incidents.models import (
    EDITABLE_FIELDS,
    Analysis,
    Feedback,
    Incident,
    IncidentCell,
    KnowledgeGap,
    Recurrence,
    Signature,
    TagCell,
)

SIMILAR_MIN_SCORE = 0.15
HISTORY_FIELDS = [*EDITABLE_FIELDS, "tag_list"]


def incident_similar(
    *, text: str, exclude_slug: str | None = None, limit: int = 5
) -> list[tuple[Incident, float]]:
    """Incidents whose knowledge matches `text` best: the engine's ranking, confident or not.

    The ranking is kept in the cache, shared by every process where the cache is: an
    incident's page asks again for the same symptom on every view. It is current for the
    knowledge it was ranked with, and is served for SIMILAR_LAG_SECONDS after the book
    changed (on a busy book that is every second): a new incident joins the others' similar
    incidents within that time, and its own page ranks the book as it is. The incidents
    themselves are read on every call: an edited title shows at once, a deleted incident is
    never offered. A ranking served from the cache needs no compiled index, so the page does
    not wait for this process to catch up with the book's latest changes."""
    token = knowledge_state().token
    key = "similar:" + hashlib.sha256(f"{exclude_slug}\0{limit}\0{text}".encode()).hexdigest()
    held = cache_get(key)  # (the token it was ranked for, when, the ranking) or None
    now = _clock()
    if held is not None and (held[0] == token or now - held[1] < settings.SIMILAR_LAG_SECONDS):
        _, _, ranked = held
    else:
        index, token = knowledge_current()
        ranked = [
            (slug, score)
            for slug, score in _ranked(text, index)
            if slug != exclude_slug and score >= SIMILAR_MIN_SCORE
        ][:limit]
        cache_set(key, (token, now, ranked), SIMILAR_KEPT_SECONDS)
    found = Incident.objects.in_bulk([slug for slug, _ in ranked], field_name="slug")
    return [(found[slug], score) for slug, score in ranked if slug in found]


# A ranking is forgotten after an hour however quiet the book: what the while-you-type
# fragment asks is new text each time, and must not pile up in a shared cache.
SIMILAR_KEPT_SECONDS = 3600
_clock = time.time  # wall-clock time, the same in every process that shares the cache


def _ranked(text: str, index: logmatch.KnowledgeIndex) -> list[tuple[str, float]]:
    try:
        report = logmatch.analyze(text, index)
    except logmatch.InputError:
        return []
    return [(s.slug, s.score) for s in report.suggestions]


# The filters whose counts the rollups keep: a tag's incidents per stage × discipline
# (TagCell), and every incident's (IncidentCell).
COUNTED_FILTERS = {"tag", "stage", "discipline"}


def incident_count(queryset: QuerySet[Incident], asked: dict, *, cap: int) -> int:
    """How many incidents the filtered `queryset` holds, counting no further than one past
    `cap`. Filters by tag, stage and discipline alone are read off the rollups (at most 16
    rows), whatever the size of the book; any other filter or a search counts the rows,
    stopping past the cap."""
    asked = {name: value for name, value in asked.items() if value not in (None, "")}
    asked.pop("sort", None)
    if not asked.keys() <= COUNTED_FILTERS:
        return count_up_to(queryset, cap)
    cells = IncidentCell.objects.all()
    if "tag" in asked:
        cells = TagCell.objects.filter(tag__name=tag_name_normalized(asked.pop("tag")))
    counted = cells.filter(**asked).aggregate(n=Sum("incidents"))["n"] or 0
    return min(counted, cap + 1)


def incident_recurrences(*, incident: Incident) -> QuerySet[Recurrence]:
    return incident.recurrences.select_related("reported_by")


def incident_history(*, incident: Incident, limit: int = 30) -> list[HistoryEntry]:
    """Who changed what and when, newest first."""
    return history_entries(incident.history, model=Incident, fields=HISTORY_FIELDS, limit=limit)


CONTEXT_LINES = 2
MAX_ERROR_LINES = 60
MAX_EVIDENCE_BLOCKS = 5
MAX_WARNING_GROUPS = 50
# A line of the tail shown as context is clipped here (the whole tail keeps it whole).
CONTEXT_CHARS = 500
CONTEXT_LEAD = 120  # characters shown before what a signature matched in a clipped line


@dataclass(frozen=True)
class ContextLine:
    number: int
    text: str
    evidence: bool


@dataclass(frozen=True)
class SuggestionView:
    incident: Incident
    text: object  # IncidentText in the page's language
    rank: int
    score: float
    confident: bool
    why: str
    context: tuple[tuple[ContextLine, ...], ...]  # one block of lines around each evidence line
    verdict: str  # this user's feedback, "" when none


def analysis_recent(*, user, limit: int = 10) -> QuerySet[Analysis]:
    return (
        Analysis.objects.filter(submitted_by=user)
        .select_related("top_incident")
        .defer("text", "report")[:limit]
    )


def analysis_get(*, pk: int) -> Analysis:
    """An analysis for its page: the stored tail and report are read only once it is done,
    so the progress polling stays cheap."""
    analysis = get_object_or_404(Analysis.objects.defer("text", "report"), pk=pk)
    if analysis.status == Analysis.Status.DONE:
        analysis.refresh_from_db(fields=["text", "report"])
    return analysis


def analysis_page(*, analysis: Analysis, user) -> dict:
    """Everything the analysis page shows: the report, suggestions with evidence in context."""
    context = {"analysis": analysis, "report": analysis.report or {}}
    if analysis.status != Analysis.Status.DONE:
        return context
    lines = analysis.text.split("\n")
    verdicts = dict(
        Feedback.objects.filter(analysis=analysis, user=user).values_list("incident_id", "verdict")
    )
    language = get_language()
    rows = analysis.suggestions.select_related("incident")
    report = context["report"]
    why = {s["slug"]: s.get("why_phrase") for s in report.get("suggestions", [])}
    focus = _matched_columns(lines, report)
    context["stage_reason"] = phrase_text(report.get("stage_phrase") or report.get("stage_reason"))
    context["suggestions"] = [
        SuggestionView(
            incident=row.incident,
            text=row.incident.text(language),
            rank=row.rank,
            score=row.score,
            confident=row.confident,
            why=phrase_text(why.get(row.incident.slug) or row.why),
            context=_evidence_context(lines, [e["line"] for e in row.evidence], focus),
            verdict=verdicts.get(row.incident_id, ""),
        )
        for row in rows
    ]
    context.update(_candidates(analysis, context.pop("suggestions")))
    context["errors"] = report.get("errors", [])[-MAX_ERROR_LINES:]
    warnings = sorted(
        (g for g in report.get("groups", []) if g["level"] == "WARNING"),
        key=lambda g: -g["count"],
    )
    context["warnings"] = warnings[:MAX_WARNING_GROUPS]
    groups = report.get("groups", [])
    context["groups_not_shown"] = (
        report.get("groups_total", len(groups)) - len(groups) + len(warnings[MAX_WARNING_GROUPS:])
    )
    return context


def _candidates(analysis: Analysis, suggestions: list[SuggestionView]) -> dict:
    """Below a confident match the weak candidates are folded away; the stage to diagnose is
    the tail's own, else the stage of the incident it confidently matches."""
    confident = [s for s in suggestions if s.confident]
    stage = analysis.stage or (confident[0].incident.stage if confident else "")
    if not confident:
        return {"suggestions": suggestions, "weaker": [], "diagnose_stage": stage}
    weaker = [s for s in suggestions if not s.confident]
    return {"suggestions": confident, "weaker": weaker, "diagnose_stage": stage}


def _matched_columns(lines: list[str], report: dict) -> dict[int, int]:
    """Where a stored signature matched each evidence line too long to show whole (line
    number → column): the page shows that part of the line. One query, and only for a tail
    with such a line."""
    wanted: dict[int, set[int]] = {}
    for suggestion in report.get("suggestions", []):
        for evidence in suggestion.get("evidence", []):
            number, pk = evidence.get("line", 0), signature_pk(evidence.get("signature") or "")
            if (
                pk is not None
                and 1 <= number <= len(lines)
                and len(lines[number - 1]) > CONTEXT_CHARS
            ):
                wanted.setdefault(number, set()).add(pk)
    if not wanted:
        return {}
    patterns = dict(
        Signature.objects.filter(pk__in=set().union(*wanted.values())).values_list("pk", "pattern")
    )
    columns = {}
    for number, pks in wanted.items():
        starts = [
            found.start()
            for pk in pks
            if pk in patterns and (found := compiled(patterns[pk]).search(lines[number - 1]))
        ]
        if starts:
            columns[number] = min(starts)
    return columns


def _evidence_context(
    lines: list[str], numbers: list[int], focus: dict[int, int]
) -> tuple[tuple[ContextLine, ...], ...]:
    """The evidence lines with a few lines around each; windows that overlap or touch are
    one block, so no line is shown twice. A line too long to show whole is shown around its
    `focus` column where it has one, else from its start."""
    wanted = sorted({n for n in numbers if 1 <= n <= len(lines)})
    windows: list[list[int]] = []
    for number in wanted:
        start, end = max(1, number - CONTEXT_LINES), min(len(lines), number + CONTEXT_LINES)
        if windows and start <= windows[-1][1] + 1:
            windows[-1][1] = max(windows[-1][1], end)
        else:
            windows.append([start, end])
    return tuple(
        tuple(
            ContextLine(number=n, text=_clip(lines[n - 1], focus.get(n, 0)), evidence=n in wanted)
            for n in range(start, end + 1)
        )
        for start, end in windows[:MAX_EVIDENCE_BLOCKS]
    )


def _clip(text: str, focus: int) -> str:
    """At most CONTEXT_CHARS characters of `text`, from a little before `focus`, with "…"
    where text was left out."""
    if len(text) <= CONTEXT_CHARS:
        return text
    start = max(0, focus - CONTEXT_LEAD)
    if start == 0:
        return text[: CONTEXT_CHARS - 1] + "…"
    if start + CONTEXT_CHARS - 1 >= len(text):
        return "…" + text[-(CONTEXT_CHARS - 1) :]
    return "…" + text[start : start + CONTEXT_CHARS - 2] + "…"


def gap_list() -> dict:
    gaps = KnowledgeGap.objects.select_related("incident")
    return {
        "open": gaps.filter(explained_at__isnull=True).order_by("-analysis_count", "-last_seen")[
            :200
        ],
        "explained": gaps.filter(explained_at__isnull=False).order_by("-explained_at")[:50],
    }


@dataclass(frozen=True)
class SignatureTry:
    problems: tuple[str, ...]
    matched: tuple[tuple[int, str], ...]  # (line number, text) of the sample
    sample_lines: int
    ruled_out_by: tuple[int, str] | None = None  # the sample line the counter-pattern matched


def signature_try(*, pattern: str, examples: str, sample: str, unless: str = "") -> SignatureTry:
    from incidents.services import signature_problems

    found = signature_problems(pattern=pattern, examples=examples, unless=unless) if pattern else {}
    lines = sample.splitlines()
    matched: list[tuple[int, str]] = []
    if pattern and not compile_error(pattern):
        regex = re2.compile(pattern, re2_options())
        matched = [(n, line) for n, line in enumerate(lines, start=1) if regex.search(line)][:200]
    ruled_out_by = None
    if matched and unless and not compile_error(unless):
        counter = re2.compile(unless, re2_options())
        ruled_out_by = next(
            ((n, line) for n, line in enumerate(lines, start=1) if counter.search(line)), None
        )
    return SignatureTry(
        problems=tuple(problem for phrases in found.values() for problem in phrases),
        matched=tuple(matched),
        sample_lines=len(lines),
        ruled_out_by=ruled_out_by,
    )


GAP_TAIL_LINES = 40
GAP_TITLE_CHARS = 100


def gap_title(gap: KnowledgeGap) -> str:
    """A first title for an incident drafted from a gap: its key line, cut at a word."""
    line = " ".join(gap.example_line.split())
    if len(line) <= GAP_TITLE_CHARS:
        return line
    cut = line[: GAP_TITLE_CHARS - 1].rsplit(" ", 1)[0]
    return cut + "…"


def gap_for_draft(value) -> KnowledgeGap | None:
    pk = whole_number(value)
    return None if pk is None else KnowledgeGap.objects.filter(pk=pk).first()


def gap_tail(gap: KnowledgeGap | None) -> str:
    """The last lines of the most recent tail behind a gap, shown while drafting from it."""
    if gap is None:
        return ""
    text = gap.analyses.order_by("-created_at").values_list("text", flat=True).first() or ""
    return "\n".join(text.split("\n")[-GAP_TAIL_LINES:])
