"""Reads of runbooks and checklist runs, named for the pages and callers that use them."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from common.history import HistoryEntry, history_entries
from common.weeks import week_bounds
from runbooks.models import RHYTHM_SLUG, ChecklistRun, Kind, Runbook, RunbookText

KIND_HEADINGS = {
    Kind.DIAGNOSE: _("Diagnose by stage"),
    Kind.CHECKLIST: _("Discipline checklists"),
    Kind.TRIAL: _("Trial runs"),
    Kind.RHYTHM: _("Rhythm"),
    Kind.GUIDE: _("Guides"),
}
RECENT_RUNS = 10
HISTORY_ENTRIES = 10


@dataclass(frozen=True)
class RunbookLink:
    runbook: Runbook
    text: RunbookText


@dataclass(frozen=True)
class RunbookGroup:
    kind: str
    heading: str
    links: tuple[RunbookLink, ...]


def _links(runbooks, language: str) -> tuple[RunbookLink, ...]:
    return tuple(RunbookLink(runbook=r, text=r.text(language)) for r in runbooks)


def runbook_list_grouped(*, language: str) -> list[RunbookGroup]:
    """Every runbook in the reader's language, grouped by kind in the handbook's order."""
    runbooks = list(Runbook.objects.all())
    return [
        RunbookGroup(
            kind=kind,
            heading=str(heading),
            links=_links([r for r in runbooks if r.kind == kind], language),
        )
        for kind, heading in KIND_HEADINGS.items()
        if any(r.kind == kind for r in runbooks)
    ]


def runbook_links_for_incident(
    *, stage: str, discipline: str, language: str
) -> tuple[RunbookLink, ...]:
    """The runbooks of an incident's stage and of its prevention discipline, in one query."""
    if not stage and not discipline:
        return ()
    condition = Q()
    if stage:
        condition |= Q(stage=stage)
    if discipline:
        condition |= Q(discipline=discipline)
    return _links(Runbook.objects.filter(condition), language)


def runbook_diagnose_for_stage(*, stage: str, language: str) -> RunbookLink | None:
    """The diagnose-by-stage runbook of `stage`; no query when the stage is unknown."""
    if not stage:
        return None
    runbook = Runbook.objects.filter(kind=Kind.DIAGNOSE, stage=stage).first()
    return None if runbook is None else RunbookLink(runbook=runbook, text=runbook.text(language))


def runbook_recent_runs(*, runbook: Runbook, limit: int = RECENT_RUNS) -> QuerySet[ChecklistRun]:
    return runbook.runs.select_related("started_by")[:limit]


def runbook_history(*, runbook: Runbook, limit: int = HISTORY_ENTRIES) -> list[HistoryEntry]:
    """Who changed the runbook and when, newest first."""
    return history_entries(runbook.history, model=Runbook, limit=limit)


def checklist_run_list() -> QuerySet[ChecklistRun]:
    return ChecklistRun.objects.select_related("runbook", "started_by")


def rhythm_runs_for_week(week_start: date) -> QuerySet[ChecklistRun]:
    """Runs of the weekly-rhythm runbook started in the ISO week holding `week_start`
    (normally its Monday), on settings.TIME_ZONE's calendar. Finished or not: check
    `finished_at` to tell a completed rhythm from one left half-done."""
    start, end = week_bounds(week_start)
    return ChecklistRun.objects.filter(
        runbook__slug=RHYTHM_SLUG, started_at__gte=start, started_at__lt=end
    ).select_related("runbook", "started_by")
