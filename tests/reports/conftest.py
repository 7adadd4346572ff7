"""Helpers for the report tests: events placed at exact local times, in a chosen week. They
write rows directly (to place them exactly) and count them in the rollups as the services do."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

import pytest
from django.utils import timezone

from common.weeks import week_last_completed
from incidents.models import Analysis, Feedback, Incident, Recurrence
from incidents.services.rollups import (
    rollups_analysis_added,
    rollups_analysis_change,
    rollups_recurrence,
)
from incidents.services.rollups_build import rollups_rebuild
from tests.factories import IncidentFactory


def local(day: date, hour: int = 12, minute: int = 0) -> datetime:
    """An aware datetime at that wall-clock time in settings.TIME_ZONE."""
    return datetime.combine(day, time(hour, minute), tzinfo=timezone.get_default_timezone())


@pytest.fixture
def week() -> date:
    """The Monday of the last completed week: buildable whatever today's date is."""
    return week_last_completed()


def incident(*, created: datetime | None = None, **fields) -> Incident:
    made = IncidentFactory(**fields)
    if created is not None:
        Incident.objects.filter(pk=made.pk).update(created_at=created)
        made.created_at = created
        rollups_rebuild()  # filed on another day than today: counted again
    return made


def recurrence(target: Incident, day: date, user=None) -> Recurrence:
    made = Recurrence.objects.create(incident=target, occurred_on=day, reported_by=user)
    rollups_recurrence(made)
    return made


def analysis(
    *,
    when: datetime,
    top: Incident | None = None,
    template: str = "",
    stage: str = "train",
    status: str = Analysis.Status.DONE,
    groups: list[dict] | None = None,
    user=None,
) -> Analysis:
    """A finished analysis: explained (confident, `top`) or not (its key `template`)."""
    made = Analysis.objects.create(
        status=status,
        submitted_by=user,
        text="tail",
        report={
            "stage": stage,
            "groups": groups or [],
            # as the engine's report says which of its groups are floods
            "floods": [n for n, group in enumerate(groups or []) if group.get("flood")],
            "confident": top is not None,
        },
        stage=stage,
        confident=top is not None,
        top_incident=top,
        key_template=template,
        flooded=any(group.get("flood") for group in groups or []),
        created_at=when,
        finished_at=when + timedelta(seconds=1),
    )
    rollups_analysis_added(made.pk)
    return made


def feedback(item: Analysis, target: Incident, user, verdict: str, when: datetime) -> Feedback:
    with rollups_analysis_change(item.pk):
        return Feedback.objects.create(
            analysis=item, incident=target, user=user, verdict=verdict, created_at=when
        )
