"""The weekly report: its language-neutral snapshot (a fixed number of grouped queries, whatever
the data size) and the stored weeks.
"""

from __future__ import annotations

from datetime import date, timedelta

from django.conf import settings
from django.db.models import Count, F, Max, Q, QuerySet, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce

from common.choices import Discipline, Stage
from common.weeks import week_label_of_date
from incidents.models import (
    Analysis,
    AnalysisDay,
    Feedback,
    Incident,
    IncidentDay,
    KnowledgeGap,
    Signature,
)
from reports.models import WeeklyReport
from reports.selectors.weekly_counts import LIST_LIMIT, Failures, Window, floods, share
from reports.snapshot import (
    SNAPSHOT_VERSION,
    Analyses,
    Attention,
    Caught,
    DimensionRow,
    GapItem,
    Gaps,
    IncidentRef,
    NewIncident,
    NewIncidents,
    NotIt,
    NotItItem,
    Recurrences,
    RecurringItem,
    StaleSignature,
    StaleSignatures,
    TrendWeek,
    WeeklySnapshot,
)

NEW_INCIDENTS_LIMIT = 50


def _titles(incident: Incident) -> dict[str, str]:
    """The title in every language, reading only `title`, `language` and `translations`
    (Incident.text() would load every deferred text column, one query each)."""
    return {
        code: (
            incident.translations.get(code, {}).get("title") if code != incident.language else None
        )
        or incident.title
        for code, _ in settings.LANGUAGES
    }


# What `_incident_ref` reads of an incident.
REF_FIELDS = ("slug", "stage", "discipline", "language", "translations", "title")


def _incident_ref(incident: Incident) -> IncidentRef:
    return IncidentRef(
        slug=incident.slug,
        titles=_titles(incident),
        stage=incident.stage,
        discipline=incident.discipline,
    )


def report_week_compute(*, week_start: date) -> WeeklySnapshot:
    """The snapshot of one ISO week: what broke, what recurred, what the book explained.

    A fixed number of queries, whatever the data size."""
    window = Window.of(week_start, settings.WEEKLY_REPORT_TREND_WEEKS)
    failures = Failures.of(window)
    trend, failed = _trend(window, failures)
    not_it, not_it_by_discipline = _not_it(window)
    disciplines = _dimension("discipline", Discipline.values, failures, window)
    return WeeklySnapshot(
        version=SNAPSHOT_VERSION,
        week=week_label_of_date(week_start),
        week_start=week_start.isoformat(),
        week_end=(window.week_end - timedelta(days=1)).isoformat(),
        time_zone=settings.TIME_ZONE,
        analyses=_analyses(trend, failed),
        new_incidents=_new_incidents(window, failures),
        recurrences=_recurrences(window),
        stages=_dimension("stage", Stage.values, failures, window),
        disciplines=disciplines,
        trend=trend,
        gaps=_gaps(window, unexplained_tails=trend[-1]["unexplained"]),
        top_recurring=_top_recurring(window),
        floods=floods(window.start, window.end),
        stale_signatures=_stale_signatures(window),
        not_it=not_it,
        attention=_attention(disciplines, not_it_by_discipline),
        caught=_caught(window),
    )


def _caught(window: Window) -> Caught:
    """Failed jobs `kb run` and `kb watch` sent this week, per stage: one grouped query."""
    rows = (
        Analysis.objects.filter(
            created_at__gte=window.start, created_at__lt=window.end, source__in=Analysis.CAUGHT
        )
        .values("stage")
        .annotate(count=Count("pk"), explained=Count("pk", filter=Q(confident=True)))
        .order_by()
    )
    stages = {row["stage"]: row["count"] for row in rows}
    return Caught(
        count=sum(stages.values()),
        explained=sum(row["explained"] for row in rows),
        stages=stages,
    )


def _trend(window: Window, failures: Failures) -> tuple[list[TrendWeek], int]:
    """Failures per stage and analyses per week; and the analyses that failed this week.
    Read from the analyses-per-day rollup: at most seven rows a week."""
    per_week = {}
    for index, monday in enumerate(window.mondays):
        in_week = Q(day__gte=monday, day__lt=monday + timedelta(days=7))
        for name in ("submitted", "explained", "unexplained"):
            per_week[f"{name}{index}"] = Coalesce(Sum(name, filter=in_week), 0)
    this_week = Q(day__gte=window.week_start, day__lt=window.week_end)
    per_week["failed"] = Coalesce(Sum("failed", filter=this_week), 0)
    counts = AnalysisDay.objects.filter(
        day__gte=window.mondays[0], day__lt=window.week_end
    ).aggregate(**per_week)
    trend = []
    for index, monday in enumerate(window.mondays):
        explained, unexplained = counts[f"explained{index}"], counts[f"unexplained{index}"]
        trend.append(
            TrendWeek(
                week=week_label_of_date(monday),
                week_start=monday.isoformat(),
                stages={s: failures.count(f"w{index}", "stage", s) for s in Stage.values},
                submitted=counts[f"submitted{index}"],
                explained=explained,
                unexplained=unexplained,
                explained_share=share(explained, explained + unexplained),
            )
        )
    return trend, counts["failed"]


def _analyses(trend: list[TrendWeek], failed: int) -> Analyses:
    current, previous = trend[-1], trend[-2] if len(trend) > 1 else None
    return Analyses(
        submitted=current["submitted"],
        explained=current["explained"],
        unexplained=current["unexplained"],
        failed=failed,
        explained_share=current["explained_share"],
        previous_share=previous["explained_share"] if previous else None,
    )


def _new_incidents(window: Window, failures: Failures) -> NewIncidents:
    incidents = (
        Incident.objects.filter(created_at__gte=window.start, created_at__lt=window.end)
        .select_related("reporter")
        .only(*REF_FIELDS, "severity", "created_at", "reporter__username")
        .order_by("created_at", "id")[:NEW_INCIDENTS_LIMIT]
    )
    return NewIncidents(
        count=sum(row[window.this] for row in failures.new),
        items=[
            NewIncident(
                **_incident_ref(incident),
                severity=incident.severity,
                reporter=incident.reporter.username if incident.reporter else "",
                created_at=incident.created_at.isoformat(),
            )
            for incident in incidents
        ],
    )


def _week_recurrences(window: Window) -> QuerySet[IncidentDay]:
    """The incident-days of the week on which an incident recurred."""
    return IncidentDay.objects.filter(
        day__gte=window.week_start, day__lt=window.week_end, recurrences__gt=0
    )


def _recurrences(window: Window) -> Recurrences:
    totals = _week_recurrences(window).aggregate(
        count=Coalesce(Sum("recurrences"), 0), incidents=Count("incident", distinct=True)
    )
    return Recurrences(count=totals["count"], incidents=totals["incidents"])


def _dimension(
    dimension: str, values: list[str], failures: Failures, window: Window
) -> list[DimensionRow]:
    """Per stage or discipline: new incidents + recurrences this week, last week, the change."""
    rows = []
    for value in values:
        fresh = sum(row[window.this] for row in failures.new if row[dimension] == value)
        count = failures.count(window.this, dimension, value)
        previous = failures.count(window.before, dimension, value)
        rows.append(
            DimensionRow(
                key=str(value),
                new=fresh,
                recurred=count - fresh,
                count=count,
                previous=previous,
                change=count - previous,
            )
        )
    return rows


def _gaps(window: Window, *, unexplained_tails: int) -> Gaps:
    """This week's unexplained tails, grouped by their key line, most frequent first."""
    unexplained = Analysis.objects.filter(
        created_at__gte=window.start,
        created_at__lt=window.end,
        status=Analysis.Status.DONE,
        confident=False,
    ).exclude(key_template="")
    rows = list(
        unexplained.values("key_template")
        .annotate(tails=Count("pk"), gap_pk=Max("gap"), stage=Max("stage"))
        .order_by("-tails", "key_template")[:LIST_LIMIT]
    )
    gaps = KnowledgeGap.objects.only("example_line", "explained_at", "incident_id").in_bulk(
        [row["gap_pk"] for row in rows if row["gap_pk"]]
    )
    return Gaps(
        templates=unexplained.values("key_template").distinct().count(),
        tails=unexplained_tails,
        items=[
            GapItem(
                key_template=row["key_template"],
                example_line=gaps[row["gap_pk"]].example_line if row["gap_pk"] in gaps else "",
                stage=row["stage"] or "",
                tails=row["tails"],
                gap_id=row["gap_pk"],
                open=row["gap_pk"] in gaps and gaps[row["gap_pk"]].explained_at is None,
            )
            for row in rows
        ],
    )


def _top_recurring(window: Window) -> list[RecurringItem]:
    rows = list(
        _week_recurrences(window)
        .values("incident_id")
        .annotate(count=Sum("recurrences"))
        .order_by("-count", "incident_id")[: LIST_LIMIT // 2]
    )
    referenced = _incidents_by_id(row["incident_id"] for row in rows)
    return [
        RecurringItem(**_incident_ref(referenced[row["incident_id"]]), count=row["count"])
        for row in rows
        if row["incident_id"] in referenced
    ]


def _stale_signatures(window: Window) -> StaleSignatures:
    """Enabled signatures that have not fired for the configured number of weeks."""
    weeks = settings.WEEKLY_REPORT_STALE_WEEKS
    cutoff = window.end - timedelta(weeks=weeks)
    stale = Signature.objects.filter(enabled=True, created_at__lt=cutoff).filter(
        Q(last_hit_at__isnull=True) | Q(last_hit_at__lt=cutoff)
    )
    items = (
        stale.select_related("incident")
        .only("pattern", "hit_count", "last_hit_at", *(f"incident__{f}" for f in REF_FIELDS))
        .order_by(F("last_hit_at").asc(nulls_first=True), "id")[:LIST_LIMIT]
    )
    return StaleSignatures(
        count=stale.count(),
        weeks=weeks,
        items=[
            StaleSignature(
                id=signature.pk,
                pattern=signature.pattern,
                hit_count=signature.hit_count,
                last_hit_at=signature.last_hit_at.isoformat() if signature.last_hit_at else None,
                incident=_incident_ref(signature.incident),
            )
            for signature in items
        ],
    )


def _not_it(window: Window) -> tuple[NotIt, dict[str, int]]:
    """Remedies marked "not it" this week, per incident; and the marks per discipline."""
    marks = Feedback.objects.filter(
        created_at__gte=window.start, created_at__lt=window.end, verdict=Feedback.Verdict.NOT_IT
    )
    rows = list(
        marks.values("incident_id")
        .annotate(count=Count("pk"), analyses=Count("analysis", distinct=True))
        .order_by("-count", "incident_id")[:LIST_LIMIT]
    )
    by_discipline = dict(
        marks.values("incident__discipline")
        .annotate(count=Count("pk"))
        .order_by()
        .values_list("incident__discipline", "count")
    )
    referenced = _incidents_by_id(row["incident_id"] for row in rows)
    section = NotIt(
        count=sum(by_discipline.values()),
        items=[
            NotItItem(
                **_incident_ref(referenced[row["incident_id"]]),
                count=row["count"],
                analyses=row["analyses"],
            )
            for row in rows
            if row["incident_id"] in referenced
        ],
    )
    return section, by_discipline


def _attention(disciplines: list[DimensionRow], not_it: dict[str, int]) -> Attention | None:
    """The discipline that most needs attention: most failures plus "not it" marks this week,
    then the steepest rise."""
    candidates = [
        (row["count"] + not_it.get(row["key"], 0), row["change"], -order, row)
        for order, row in enumerate(disciplines)
        if row["count"] + not_it.get(row["key"], 0) > 0
    ]
    if not candidates:
        return None
    *_, best = max(candidates, key=lambda candidate: candidate[:3])
    return Attention(
        discipline=best["key"],
        count=best["count"],
        change=best["change"],
        not_it=not_it.get(best["key"], 0),
    )


def _incidents_by_id(ids) -> dict[int, Incident]:
    return Incident.objects.only(*REF_FIELDS).in_bulk(list(ids))


def report_list() -> QuerySet[WeeklyReport]:
    """The weeks, newest first, without their snapshots (only the headline numbers)."""
    return (
        WeeklyReport.objects.defer("data")
        .select_related("reviewed_by")
        .annotate(
            explained_share=KT("data__analyses__explained_share"),
            submitted=KT("data__analyses__submitted"),
            failures=KT("data__new_incidents__count"),
            recurred=KT("data__recurrences__count"),
        )
    )


def report_get(*, week_start: date) -> WeeklyReport | None:
    return WeeklyReport.objects.select_related("reviewed_by").filter(week_start=week_start).first()
