"""The rollups equal what they count after any sequence of writes through the services, a
window rolled over any number of days, and a rebuild from scratch."""

from __future__ import annotations

from collections import Counter
from datetime import date, datetime, time, timedelta

import pytest
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from common.choices import Discipline, Stage
from incidents import logmatch, services
from incidents.models import (
    Analysis,
    AnalysisDay,
    CellDay,
    Feedback,
    Incident,
    IncidentCell,
    IncidentDay,
    Recurrence,
    Tag,
    TagCell,
    TagCellDay,
    WindowState,
    WindowTotal,
)
from incidents.services.analysis import (
    _finish_failed,
    analysis_fail,
    analysis_give_up_if_spent,
    analysis_store,
)
from incidents.services.rollups import local_day, rollups_analysis_added
from incidents.services.rollups_build import WINDOWS, rollups_rebuild, rollups_window
from reports.selectors import MatrixParams, matrix_get
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db
TAGS = ("kaldi", "nccl", "gpu")


def _today() -> date:
    return timezone.localdate(timezone=timezone.get_default_timezone())


# --- the live aggregates, counted in Python from the rows ------------------------------------


def live_days() -> Counter:
    """(incident, day, "r" or "a") → count, as the matrix's module docstring defines it."""
    days: Counter = Counter()
    for incident_id, day in Recurrence.objects.values_list("incident_id", "occurred_on"):
        days[incident_id, day, "r"] += 1
    answered = set(Feedback.objects.values_list("analysis_id", "incident_id"))
    for pk, top, created in Analysis.objects.filter(
        status=Analysis.Status.DONE, confident=True, top_incident__isnull=False
    ).values_list("pk", "top_incident_id", "created_at"):
        if (pk, top) not in answered:
            days[top, local_day(created), "a"] += 1
    return days


def stored_days() -> Counter:
    days: Counter = Counter()
    for incident_id, day, r, a in IncidentDay.objects.values_list(
        "incident_id", "day", "recurrences", "analyses"
    ):
        assert r or a, "a row where nothing happened"
        days.update({(incident_id, day, "r"): r, (incident_id, day, "a"): a})
    return +days


def live_cells() -> tuple[Counter, Counter]:
    rows = Incident.objects.values_list("pk", "stage", "discipline", "created_at")
    where = {pk: (s, d) for pk, s, d, _ in rows}
    cells: Counter = Counter()
    for (incident_id, day, kind), n in live_days().items():
        cells[(*where[incident_id], day, kind)] += n
    for _, stage, discipline, created in rows:
        cells[stage, discipline, local_day(created), "f"] += 1
    return cells, Counter(where.values())


def live_tag_cells() -> tuple[Counter, Counter]:
    where = dict(
        ((pk, (s, d)) for pk, s, d in Incident.objects.values_list("pk", "stage", "discipline"))
    )
    links = list(Incident.tags.through.objects.values_list("incident_id", "tag_id"))
    days: Counter = Counter()
    for (incident_id, day, _), n in live_days().items():
        for tagged, tag in links:
            if tagged == incident_id:
                days[(tag, *where[incident_id], day)] += n
    return +days, +Counter((tag, *where[incident_id]) for incident_id, tag in links)


def stored_tag_cells() -> tuple[Counter, Counter]:
    days: Counter = Counter()
    for tag, stage, discipline, day, n in TagCellDay.objects.values_list(
        "tag_id", "stage", "discipline", "day", "happened"
    ):
        assert n, "a tag's cell-day where nothing happened"
        days[tag, stage, discipline, day] += n
    cells = Counter(
        {
            (tag, s, d): n
            for tag, s, d, n in TagCell.objects.values_list(
                "tag_id", "stage", "discipline", "incidents"
            )
        }
    )
    assert all(cells.values()), "a tag's cell with no incident"
    return days, cells


def live_trend() -> Counter:
    trend: Counter = Counter()
    for status, confident, created in Analysis.objects.values_list(
        "status", "confident", "created_at"
    ):
        day = local_day(created)
        trend[day, "submitted"] += 1
        if status == Analysis.Status.DONE:
            trend[day, "explained" if confident else "unexplained"] += 1
        elif status == Analysis.Status.FAILED:
            trend[day, "failed"] += 1
    return trend


def stored_trend() -> Counter:
    trend: Counter = Counter()
    for row in AnalysisDay.objects.values():
        for name in ("submitted", "explained", "unexplained", "failed"):
            trend[row["day"], name] += row[name]
    return +trend


def stored_cells() -> tuple[Counter, Counter]:
    cells: Counter = Counter()
    for stage, discipline, day, r, a, f in CellDay.objects.values_list(
        "stage", "discipline", "day", "recurrences", "analyses", "filed"
    ):
        assert r or a or f, "a cell-day where nothing happened"
        cells.update(
            {
                (stage, discipline, day, "r"): r,
                (stage, discipline, day, "a"): a,
                (stage, discipline, day, "f"): f,
            }
        )
    counts = Counter(
        {
            (s, d): n
            for s, d, n in IncidentCell.objects.values_list("stage", "discipline", "incidents")
        }
    )
    return +cells, +counts


def live_window(weeks: int, end: date) -> dict[int, int]:
    start = end - timedelta(weeks=weeks)
    totals: Counter = Counter()
    for (incident_id, day, _), n in live_days().items():
        if start < day <= end:
            totals[incident_id] += n
    return dict(+totals)


def assert_rollups_equal_live() -> None:
    assert stored_days() == +live_days()
    assert stored_cells() == tuple(+counter for counter in live_cells())
    assert stored_trend() == +live_trend()
    assert stored_tag_cells() == live_tag_cells()
    incidents = {
        pk: (s, c) for pk, s, c in Incident.objects.values_list("pk", "stage", "recurrence_count")
    }
    for weeks, as_of in WindowState.objects.exclude(as_of=None).values_list("weeks", "as_of"):
        rows = WindowTotal.objects.filter(weeks=weeks).values_list(
            "incident_id", "happened", "stage", "recurrence_count"
        )
        assert {pk: n for pk, n, _, _ in rows} == live_window(weeks, as_of), weeks
        assert all(incidents[pk] == (stage, count) for pk, _, stage, count in rows)


def live_matrix(weeks: int, per_stage: int, tag: str = "") -> tuple[dict, dict]:
    """What the matrix showed before rollups: each stage's ranking and the heat map."""
    totals = live_window(weeks, _today())
    incidents = Incident.objects.filter(tags__name=tag) if tag else Incident.objects.all()
    rows = list(incidents.values_list("pk", "slug", "stage", "discipline", "recurrence_count"))
    ranking = {
        stage: [
            (slug, totals.get(pk, 0))
            for pk, slug, _, _, count in sorted(
                (row for row in rows if row[2] == stage),
                key=lambda row: (-totals.get(row[0], 0), -row[4], row[0]),
            )[:per_stage]
        ]
        for stage in Stage.values
    }
    heat: Counter = Counter()
    for pk, _, stage, discipline, _ in rows:
        heat[stage, discipline, "incidents"] += 1
        heat[stage, discipline, "happened"] += totals.get(pk, 0)
    return ranking, +heat


def shown_matrix(weeks: int, per_stage: int, tag: str = "") -> tuple[dict, dict]:
    params = MatrixParams(weeks=weeks, per_stage=per_stage, tag=tag)
    matrix = matrix_get(params=params, language="en")
    ranking = {row.stage: [(e.slug, e.happened) for e in row.entries] for row in matrix.rows}
    heat: Counter = Counter()
    for row in matrix.heat:
        for cell in row.cells:
            heat[cell.stage, cell.discipline, "incidents"] += cell.incidents
            heat[cell.stage, cell.discipline, "happened"] += cell.happened
    return ranking, +heat


# --- the writes ---------------------------------------------------------------------------------


def report_for(*incidents: Incident, confident: bool = True) -> logmatch.Report:
    suggestions = tuple(
        logmatch.Suggestion(
            slug=incident.slug, title=incident.title, score=0.9, confident=confident, evidence=()
        )
        for incident in incidents
    )
    return logmatch.Report(
        stage="train",
        stage_reason="",
        levels={},
        groups=(),
        line_groups=(),
        errors=(),
        suggestions=suggestions,
        key_line=None,
        key_template="",
        line_count=1,
    )


def analysis_finished(day: date, report: logmatch.Report) -> Analysis:
    """A submitted tail that a worker claimed and stored `report` for."""
    moment = datetime.combine(day, time(23, 30), tzinfo=timezone.get_default_timezone())
    analysis = Analysis.objects.create(
        status=Analysis.Status.RUNNING, attempts=1, text="tail", created_at=moment
    )
    rollups_analysis_added(analysis.pk)  # as analysis_request does, on its own day
    assert analysis_store(analysis, report, attempt=1)
    return analysis


class World:
    """Draws writes from hypothesis and performs them through the services."""

    def __init__(self, data, people):
        self.data, self.people, self.today = data, people, _today()

    def pick(self, queryset):
        pks = list(queryset.order_by("pk").values_list("pk", flat=True))
        return queryset.model.objects.get(pk=self.data.draw(st.sampled_from(pks))) if pks else None

    def some_incidents(self, count: int) -> list[Incident]:
        """`count` distinct incidents (fewer if there are fewer), drawn by the test's data: a
        random database order would make Hypothesis's replays draw differently."""
        pks = list(Incident.objects.order_by("pk").values_list("pk", flat=True))
        size = min(count, len(pks))
        drawn = (
            self.data.draw(
                st.lists(st.sampled_from(pks), unique=True, min_size=size, max_size=size)
            )
            if pks
            else []
        )
        return [Incident.objects.get(pk=pk) for pk in drawn]

    def day(self) -> date:
        return self.today - timedelta(days=self.data.draw(st.integers(-3, 400)))

    def tags(self) -> list[str]:
        return self.data.draw(st.lists(st.sampled_from(TAGS), unique=True, max_size=3))

    def file(self):
        IncidentFactory(
            stage=self.data.draw(st.sampled_from(Stage.values)),
            discipline=self.data.draw(st.sampled_from(Discipline.values)),
            tags=self.tags(),
        )

    def retag(self):
        if incident := self.pick(Incident.objects.all()):
            services.incident_update(incident=incident, data={}, tags=self.tags(), actor=None)

    def tag_from_the_tag(self):
        """The other side of the relation, as the admin's or a shell's tag.incidents does."""
        tag, _ = Tag.objects.get_or_create(name=self.data.draw(st.sampled_from(TAGS)))
        incidents = list(Incident.objects.order_by("pk").values_list("pk", flat=True))
        chosen = (
            self.data.draw(st.lists(st.sampled_from(incidents), max_size=3)) if incidents else []
        )
        how = self.data.draw(st.sampled_from(["add", "remove", "clear", "delete"]))
        if how == "clear":
            tag.incidents.clear()
        elif how == "delete":
            tag.delete()
        else:
            getattr(tag.incidents, how)(*chosen)

    def recur(self):
        if incident := self.pick(Incident.objects.all()):
            services.incident_record_recurrence(
                incident=incident, reported_by=self.people[0], occurred_on=self.day()
            )

    def unrecur(self):
        if recurrence := self.pick(Recurrence.objects.all()):
            services.recurrence_delete(recurrence=recurrence)

    def move_recurrence(self):  # as the admin edits one
        recurrence, incident = (
            self.pick(Recurrence.objects.all()),
            self.pick(Incident.objects.all()),
        )
        if recurrence and incident:
            was = (recurrence.incident_id, recurrence.occurred_on)
            recurrence.incident, recurrence.occurred_on = incident, self.day()
            recurrence.save()
            services.recurrence_update(recurrence=recurrence, was=was)

    def analyse(self):
        incidents = self.some_incidents(2)
        confident = self.data.draw(st.booleans())
        analysis_finished(self.day(), report_for(*incidents, confident=confident))

    def submit(self):
        services.analysis_request(data="ERROR: something broke", user=self.people[0])

    def fail_queued(self):
        if analysis := self.pick(Analysis.objects.filter(status=Analysis.Status.QUEUED)):
            analysis_fail(analysis_id=analysis.pk, message="lost")

    def fail_running(self):
        if analysis := self.pick(Analysis.objects.filter(status=Analysis.Status.QUEUED)):
            Analysis.objects.filter(pk=analysis.pk).update(
                status=Analysis.Status.RUNNING, attempts=9
            )
            if self.data.draw(st.booleans()):
                _finish_failed(analysis.pk, 9, "crashed")
            else:
                analysis_give_up_if_spent(analysis_id=analysis.pk, dead=Q(pk=analysis.pk))

    def finish_queued(self):
        if analysis := self.pick(Analysis.objects.filter(status=Analysis.Status.QUEUED)):
            Analysis.objects.filter(pk=analysis.pk).update(
                status=Analysis.Status.RUNNING, attempts=1
            )
            incidents = self.some_incidents(1)
            analysis_store(analysis, report_for(*incidents), attempt=1)

    def rerank(self):
        analysis = self.pick(Analysis.objects.all())
        incidents = self.some_incidents(2)
        if analysis:
            before = analysis.top_incident.slug if analysis.top_incident else ""
            confident = self.data.draw(st.booleans())
            analysis_store(
                analysis,
                report_for(*incidents, confident=confident),
                attempt=None,
                reranked_from=before,
            )

    def answer(self):
        analysis = self.pick(Analysis.objects.filter(suggestions__isnull=False).distinct())
        if analysis:
            suggestion = self.pick(analysis.suggestions.all())
            services.analysis_feedback(
                analysis=analysis,
                incident=suggestion.incident,
                user=self.data.draw(st.sampled_from(self.people)),
                verdict=self.data.draw(st.sampled_from(Feedback.Verdict.values)),
            )

    def move_incident(self):
        if incident := self.pick(Incident.objects.all()):
            services.incident_update(
                incident=incident,
                data={
                    "stage": self.data.draw(st.sampled_from(Stage.values)),
                    "discipline": self.data.draw(st.sampled_from(Discipline.values)),
                },
                actor=None,
            )

    def delete_incident(self):
        if incident := self.pick(Incident.objects.all()):
            services.incident_delete(incident=incident)


WRITES = [
    name
    for name in vars(World)
    if not name.startswith("_") and name not in ("pick", "some_incidents", "day", "tags")
]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_any_sequence_of_writes_keeps_the_rollups_equal_to_the_rows(data, alice, bob):
    with transaction.atomic():
        today = _today()
        world = World(data, [alice, bob])
        for _ in range(3):
            world.file()
        # Some windows counted up to a while ago: rolling them over must catch up.
        for weeks in WINDOWS:
            lag = data.draw(st.sampled_from([None, 0, 1, 6, 30, 400]), label=f"lag {weeks}")
            if lag is not None:
                rollups_window(weeks=weeks, today=today - timedelta(days=lag))
        for write in data.draw(st.lists(st.sampled_from(WRITES), min_size=1, max_size=25)):
            getattr(world, write)()
            assert_rollups_equal_live()
        for weeks in WINDOWS:
            assert rollups_window(weeks=weeks, today=today)
        assert_rollups_equal_live()
        for weeks, per_stage in ((4, 2), (12, 8), (52, 3)):
            assert shown_matrix(weeks, per_stage) == live_matrix(weeks, per_stage)
            for tag in TAGS:
                assert shown_matrix(weeks, per_stage, tag) == live_matrix(weeks, per_stage, tag)
        maintained = (stored_days(), stored_cells(), stored_trend(), stored_tag_cells())
        rollups_rebuild(today=today)
        assert (stored_days(), stored_cells(), stored_trend(), stored_tag_cells()) == maintained
        assert_rollups_equal_live()
        transaction.set_rollback(True)
