"""The weekly report: its language-neutral snapshot (a fixed number of grouped queries, whatever
the data size) and the stored weeks.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connections
from django.db.models import Count, F, Max, Q, QuerySet
from django.db.models.fields.json import KT

from common.choices import Discipline, Stage
from common.weeks import week_bounds, week_label_of_date
from incidents.models import Analysis, Feedback, Incident, KnowledgeGap, Recurrence, Signature
from reports.models import WeeklyReport

LIST_LIMIT = 20
NEW_INCIDENTS_LIMIT = 50
SNAPSHOT_VERSION = 1


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


def _incident_ref(incident: Incident) -> dict[str, Any]:
    return {
        "slug": incident.slug,
        "titles": _titles(incident),
        "stage": incident.stage,
        "discipline": incident.discipline,
    }


def _weekly_counts(
    queryset: QuerySet, field: str, mondays: list[date], group_by: tuple[str, ...], *, dates: bool
) -> list[dict[str, Any]]:
    """One row per group with a count per week ("w0" the oldest): one query, CASE in SQL."""
    per_week = {}
    for index, monday in enumerate(mondays):
        low, high = (monday, monday + timedelta(days=7)) if dates else week_bounds(monday)
        per_week[f"w{index}"] = Count(
            "pk", filter=Q(**{f"{field}__gte": low, f"{field}__lt": high})
        )
    return list(queryset.values(*group_by).annotate(**per_week).order_by())


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


FLOODS_SQL = {
    "postgresql": """
        SELECT g.value->>'template', MAX(g.value->>'example'), MAX(a.stage),
            SUM((g.value->>'count')::bigint), COUNT(DISTINCT a.id)
        FROM {table} a CROSS JOIN LATERAL jsonb_array_elements(
            CASE WHEN jsonb_typeof(a.report->'groups') = 'array' THEN a.report->'groups'
            ELSE '[]'::jsonb END) AS g(value)
        WHERE a.created_at >= %s AND a.created_at < %s AND a.status = 'done'
            AND (g.value->>'flood') = 'true'
        GROUP BY 1 ORDER BY 4 DESC, 1 LIMIT %s
    """,
    "sqlite": """
        SELECT json_extract(g.value, '$.template'), MAX(json_extract(g.value, '$.example')),
            MAX(a.stage), SUM(json_extract(g.value, '$.count')), COUNT(DISTINCT a.id)
        FROM {table} a, json_each(a.report, '$.groups') AS g
        WHERE a.created_at >= %s AND a.created_at < %s AND a.status = 'done'
            AND json_extract(g.value, '$.flood') = 1
        GROUP BY 1 ORDER BY 4 DESC, 1 LIMIT %s
    """,
}


def _floods(start: datetime, end: datetime) -> list[dict[str, Any]]:
    """Warning floods in this week's analyses, read from the stored reports by the database."""
    connection = connections[Analysis.objects.db]
    sql = FLOODS_SQL.get(connection.vendor)
    if sql is None:
        return []
    ops = connection.ops
    with connection.cursor() as cursor:
        cursor.execute(
            sql.format(table=connection.ops.quote_name(Analysis._meta.db_table)),
            [ops.adapt_datetimefield_value(start), ops.adapt_datetimefield_value(end), LIST_LIMIT],
        )
        return [
            {
                "template": template,
                "example": example or "",
                "stage": stage or "",
                "lines": int(lines or 0),
                "analyses": int(analyses),
            }
            for template, example, stage, lines, analyses in cursor.fetchall()
        ]


def _dimension(
    key_of: str, choices: list[tuple[str, Any]], new: list[dict], recurred: list[dict], weeks: int
) -> list[dict[str, Any]]:
    """Per stage or discipline: new incidents + recurrences this week, last week and the change."""
    now, before = f"w{weeks - 1}", f"w{weeks - 2}"
    rows = []
    for value, _ in choices:
        fresh = sum(row[now] for row in new if row[key_of[0]] == value)
        again = sum(row[now] for row in recurred if row[key_of[1]] == value)
        previous = sum(row[before] for row in new if row[key_of[0]] == value) + sum(
            row[before] for row in recurred if row[key_of[1]] == value
        )
        rows.append(
            {
                "key": str(value),
                "new": fresh,
                "recurred": again,
                "count": fresh + again,
                "previous": previous,
                "change": fresh + again - previous,
            }
        )
    return rows


def _attention(disciplines: list[dict], not_it: dict[str, int]) -> dict[str, Any] | None:
    """The discipline that most needs attention: most failures plus "not it" marks this week,
    then the steepest rise."""
    scored = [
        {**row, "not_it": not_it.get(row["key"], 0), "order": index}
        for index, row in enumerate(disciplines)
    ]
    candidates = [row for row in scored if row["count"] + row["not_it"] > 0]
    if not candidates:
        return None
    best = max(
        candidates, key=lambda row: (row["count"] + row["not_it"], row["change"], -row["order"])
    )
    return {
        "discipline": best["key"],
        "count": best["count"],
        "change": best["change"],
        "not_it": best["not_it"],
    }


def report_week_compute(*, week_start: date) -> dict[str, Any]:
    """The snapshot of one ISO week: what broke, what recurred, what the book explained.

    Language-neutral (codes, numbers, titles in every language) so that one stored snapshot
    reads in each user's language. A fixed number of queries, whatever the data size."""
    trend_weeks = settings.WEEKLY_REPORT_TREND_WEEKS
    stale_weeks = settings.WEEKLY_REPORT_STALE_WEEKS
    start, end = week_bounds(week_start)
    week_end = week_start + timedelta(days=7)
    mondays = [week_start - timedelta(weeks=n) for n in range(trend_weeks - 1, -1, -1)]
    trend_start, _ = week_bounds(mondays[0])
    last = f"w{trend_weeks - 1}"

    new = _weekly_counts(
        Incident.objects.filter(created_at__gte=trend_start, created_at__lt=end),
        "created_at",
        mondays,
        ("stage", "discipline"),
        dates=False,
    )
    recurred = _weekly_counts(
        Recurrence.objects.filter(occurred_on__gte=mondays[0], occurred_on__lt=week_end),
        "occurred_on",
        mondays,
        ("incident__stage", "incident__discipline"),
        dates=True,
    )
    analyses_per_week = {}
    for index, monday in enumerate(mondays):
        low, high = week_bounds(monday)
        in_week = Q(created_at__gte=low, created_at__lt=high)
        done = in_week & Q(status=Analysis.Status.DONE)
        per_week = {
            f"submitted{index}": Count("pk", filter=in_week),
            f"explained{index}": Count("pk", filter=done & Q(confident=True)),
            f"unexplained{index}": Count("pk", filter=done & Q(confident=False)),
        }
        analyses_per_week.update(per_week)
    this_week = Q(created_at__gte=start, created_at__lt=end)
    analyses_per_week["failed"] = Count("pk", filter=this_week & Q(status=Analysis.Status.FAILED))
    counts = Analysis.objects.filter(created_at__gte=trend_start, created_at__lt=end).aggregate(
        **analyses_per_week
    )

    trend = []
    for index, monday in enumerate(mondays):
        key = f"w{index}"
        explained, unexplained = counts[f"explained{index}"], counts[f"unexplained{index}"]
        trend.append(
            {
                "week": week_label_of_date(monday),
                "week_start": monday.isoformat(),
                "stages": {
                    stage: sum(row[key] for row in new if row["stage"] == stage)
                    + sum(row[key] for row in recurred if row["incident__stage"] == stage)
                    for stage in Stage.values
                },
                "submitted": counts[f"submitted{index}"],
                "explained": explained,
                "unexplained": unexplained,
                "explained_share": _share(explained, explained + unexplained),
            }
        )
    current, previous = trend[-1], trend[-2] if len(trend) > 1 else None

    week_analyses = Analysis.objects.filter(created_at__gte=start, created_at__lt=end)
    unexplained = week_analyses.filter(status=Analysis.Status.DONE, confident=False).exclude(
        key_template=""
    )
    gap_rows = list(
        unexplained.values("key_template")
        .annotate(tails=Count("pk"), gap_id=Max("gap"), stage=Max("stage"))
        .order_by("-tails", "key_template")[:LIST_LIMIT]
    )
    gap_templates = unexplained.values("key_template").distinct().count()
    gaps = KnowledgeGap.objects.only("example_line", "explained_at", "incident_id").in_bulk(
        [row["gap_id"] for row in gap_rows if row["gap_id"]]
    )

    week_recurrences = Recurrence.objects.filter(
        occurred_on__gte=week_start, occurred_on__lt=week_end
    )
    recurrence_totals = week_recurrences.aggregate(
        count=Count("pk"), incidents=Count("incident", distinct=True)
    )
    top_recurring = list(
        week_recurrences.values("incident_id")
        .annotate(count=Count("pk"))
        .order_by("-count", "incident_id")[: LIST_LIMIT // 2]
    )
    not_it_week = Feedback.objects.filter(
        created_at__gte=start, created_at__lt=end, verdict=Feedback.Verdict.NOT_IT
    )
    not_it_rows = list(
        not_it_week.values("incident_id")
        .annotate(count=Count("pk"), analyses=Count("analysis", distinct=True))
        .order_by("-count", "incident_id")[:LIST_LIMIT]
    )
    not_it_by_discipline = dict(
        not_it_week.values("incident__discipline")
        .annotate(count=Count("pk"))
        .order_by()
        .values_list("incident__discipline", "count")
    )
    referenced = Incident.objects.only(
        "slug", "stage", "discipline", "language", "translations", "title"
    ).in_bulk([row["incident_id"] for row in (*top_recurring, *not_it_rows)])

    new_incidents = list(
        Incident.objects.filter(created_at__gte=start, created_at__lt=end)
        .select_related("reporter")
        .only(
            "slug",
            "stage",
            "discipline",
            "severity",
            "language",
            "translations",
            "title",
            "created_at",
            "reporter__username",
        )
        .order_by("created_at", "id")[:NEW_INCIDENTS_LIMIT]
    )

    stale_cutoff = end - timedelta(weeks=stale_weeks)
    stale = Signature.objects.filter(enabled=True, created_at__lt=stale_cutoff).filter(
        Q(last_hit_at__isnull=True) | Q(last_hit_at__lt=stale_cutoff)
    )
    stale_count = stale.count()
    stale_items = list(
        stale.select_related("incident")
        .only(
            "pattern",
            "hit_count",
            "last_hit_at",
            "incident__slug",
            "incident__stage",
            "incident__discipline",
            "incident__language",
            "incident__translations",
            "incident__title",
        )
        .order_by(F("last_hit_at").asc(nulls_first=True), "id")[:LIST_LIMIT]
    )

    stages = _dimension(("stage", "incident__stage"), Stage.choices, new, recurred, trend_weeks)
    disciplines = _dimension(
        ("discipline", "incident__discipline"), Discipline.choices, new, recurred, trend_weeks
    )
    return {
        "version": SNAPSHOT_VERSION,
        "week": week_label_of_date(week_start),
        "week_start": week_start.isoformat(),
        "week_end": (week_end - timedelta(days=1)).isoformat(),
        "time_zone": settings.TIME_ZONE,
        "analyses": {
            "submitted": current["submitted"],
            "explained": current["explained"],
            "unexplained": current["unexplained"],
            "failed": counts["failed"],
            "explained_share": current["explained_share"],
            "previous_share": previous["explained_share"] if previous else None,
        },
        "new_incidents": {
            "count": sum(row[last] for row in new),
            "items": [
                {
                    **_incident_ref(incident),
                    "severity": incident.severity,
                    "reporter": incident.reporter.username if incident.reporter else "",
                    "created_at": incident.created_at.isoformat(),
                }
                for incident in new_incidents
            ],
        },
        "recurrences": recurrence_totals,
        "stages": stages,
        "disciplines": disciplines,
        "trend": trend,
        "gaps": {
            "templates": gap_templates,
            "tails": current["unexplained"],
            "items": [
                {
                    "key_template": row["key_template"],
                    "example_line": gaps[row["gap_id"]].example_line
                    if row["gap_id"] in gaps
                    else "",
                    "stage": row["stage"] or "",
                    "tails": row["tails"],
                    "gap_id": row["gap_id"],
                    "open": row["gap_id"] in gaps and gaps[row["gap_id"]].explained_at is None,
                }
                for row in gap_rows
            ],
        },
        "top_recurring": [
            {**_incident_ref(referenced[row["incident_id"]]), "count": row["count"]}
            for row in top_recurring
            if row["incident_id"] in referenced
        ],
        "floods": _floods(start, end),
        "stale_signatures": {
            "count": stale_count,
            "weeks": stale_weeks,
            "items": [
                {
                    "id": signature.pk,
                    "pattern": signature.pattern,
                    "hit_count": signature.hit_count,
                    "last_hit_at": signature.last_hit_at.isoformat()
                    if signature.last_hit_at
                    else None,
                    "incident": _incident_ref(signature.incident),
                }
                for signature in stale_items
            ],
        },
        "not_it": {
            "count": sum(not_it_by_discipline.values()),
            "items": [
                {
                    **_incident_ref(referenced[row["incident_id"]]),
                    "count": row["count"],
                    "analyses": row["analyses"],
                }
                for row in not_it_rows
                if row["incident_id"] in referenced
            ],
        },
        "attention": _attention(disciplines, not_it_by_discipline),
    }


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
