"""Ranking stored analyses again after the incident book changed.

Only the analyses a change can affect are ranked again: those that suggested a changed
incident (or lost their top incident), those with a line that a changed incident's signatures
now match, and unexplained ones whose key line now resembles a changed incident. They are
taken in small batches, each well inside the task's time limit and each analysis in its own
short transaction, on a queue of their own, so that a burst of edits never holds up a pasted
tail (nor, on SQLite, the database).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from incidents import logmatch
from incidents.knowledge import feedback_map, knowledge_index
from incidents.models import Analysis, AnalysisSuggestion, KnowledgeChange, KnowledgeGap

RESCORE_WINDOW = timedelta(days=30)
RESCORE_LIMIT = 1000  # stored analyses looked at per burst of changes, newest first
BATCH_TAILS = 25  # analyses ranked again per task, at most…
BATCH_BYTES = 4 << 20  # …or this much stored tail
# An unexplained tail whose key line resembles a changed incident this much is ranked again.
SIMILAR_ENOUGH = 0.3


@dataclass
class RescoreResult:
    changes: int = 0
    candidates: int = 0
    rescored: int = 0
    reranked: int = 0  # analyses whose first suggestion changed
    newly_explained: list[int] = field(default_factory=list)  # KnowledgeGap ids
    remaining: list[int] = field(default_factory=list)  # for the next batch


def analyses_rescore(*, analysis_ids: Sequence[int] | None = None) -> RescoreResult:
    """Take every noted knowledge change and rank again the first batch of the analyses
    they affect, or continue with `analysis_ids`; `remaining` is the work left."""
    from incidents.services.analysis import analysis_store, analyze_stored

    result = RescoreResult()
    if analysis_ids is None:
        slugs = _take_changes()
        result.changes = len(slugs)
        if not slugs:
            return result
        analysis_ids = affected_analyses(slugs)
        result.candidates = len(analysis_ids)
    batch, result.remaining = _batch(analysis_ids)
    open_gaps = set(
        KnowledgeGap.objects.filter(explained_at__isnull=True).values_list("pk", flat=True)
    )
    index, feedback = knowledge_index(), feedback_map()
    for analysis in Analysis.objects.filter(pk__in=batch, status=Analysis.Status.DONE):
        try:
            report = analyze_stored(analysis, index, feedback)
        except logmatch.InputError:
            continue
        before = analysis.top_incident.slug if analysis.top_incident else ""
        if analysis_store(analysis, report, attempt=None, reranked_from=before):
            result.rescored += 1
            result.reranked += _first_slug(report) != before
    still_open = set(
        KnowledgeGap.objects.filter(pk__in=open_gaps, explained_at__isnull=True).values_list(
            "pk", flat=True
        )
    )
    result.newly_explained = sorted(open_gaps - still_open)
    return result


def _take_changes() -> set[str]:
    """The slugs of every change noted and not yet taken; taking them is one UPDATE, so two
    re-rankings never take the same change."""
    with transaction.atomic():
        pending = list(
            KnowledgeChange.objects.filter(taken_at__isnull=True).values_list("pk", "slug")
        )
        KnowledgeChange.objects.filter(pk__in=[pk for pk, _ in pending]).update(
            taken_at=timezone.now()
        )
    KnowledgeChange.objects.filter(taken_at__lt=timezone.now() - RESCORE_WINDOW).delete()
    return {slug for _, slug in pending}


def affected_analyses(slugs: set[str]) -> list[int]:
    """Recent finished analyses that a change to these incidents can rank differently,
    newest first."""
    recent = Analysis.objects.filter(
        status=Analysis.Status.DONE, created_at__gte=timezone.now() - RESCORE_WINDOW
    ).order_by("-created_at")[:RESCORE_LIMIT]
    rows = list(recent.values_list("pk", "confident", "report__key_line", "report__errors"))
    window = [pk for pk, *_ in rows]
    suggested = set(
        AnalysisSuggestion.objects.filter(analysis__in=window, incident__slug__in=slugs)
        .values_list("analysis", flat=True)
        .distinct()
    )
    orphaned = set(  # their confident top incident was deleted
        recent.model.objects.filter(
            Q(pk__in=window), confident=True, top_incident__isnull=True
        ).values_list("pk", flat=True)
    )
    index = knowledge_index()
    changed = index.signatures.only(slugs)
    similar = {slug for slug in slugs if slug in index.incidents}
    matched = set()
    for pk, confident, key_line, errors in rows:
        lines = [line["text"] for line in [*(errors or []), key_line or {}] if line.get("text")]
        if changed.scan(lines) or (
            not confident and key_line and _resembles(index, similar, key_line["text"])
        ):
            matched.add(pk)
    wanted = suggested | orphaned | matched
    return [pk for pk in window if pk in wanted]


def _resembles(index: logmatch.KnowledgeIndex, slugs: set[str], text: str) -> bool:
    scores = index.similarity.score(text)
    return any(scores.get(slug, 0.0) >= SIMILAR_ENOUGH for slug in slugs)


def _batch(analysis_ids: Sequence[int]) -> tuple[list[int], list[int]]:
    """The first analyses to rank again, by count and by the size of their stored tails."""
    sizes = dict(
        Analysis.objects.filter(pk__in=analysis_ids[:BATCH_TAILS]).values_list("pk", "size_bytes")
    )
    batch: list[int] = []
    total = 0
    for pk in analysis_ids[:BATCH_TAILS]:
        if batch and total + sizes.get(pk, 0) > BATCH_BYTES:
            break
        batch.append(pk)
        total += sizes.get(pk, 0)
    return batch, list(analysis_ids[len(batch) :])


def _first_slug(report: logmatch.Report) -> str:
    return report.suggestions[0].slug if report.confident else ""
