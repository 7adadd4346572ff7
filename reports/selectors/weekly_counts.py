"""The counting behind the weekly report: the week and its trend window, failures per stage
and discipline per week (read from the rollups: at most 16 rows a day), and the warning floods
read from stored reports by the database. Each is one grouped query."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db import connections
from django.db.models import Q, QuerySet, Sum
from django.db.models.functions import Coalesce

from common.weeks import week_bounds
from incidents.models import Analysis, CellDay
from reports.snapshot import Flood

LIST_LIMIT = 20


def weekly_sums(
    queryset: QuerySet, column: str, mondays: tuple[date, ...], group_by: tuple[str, ...]
) -> list[dict[str, Any]]:
    """One row per group with the sum of a day rollup's `column` per week ("w0" the oldest):
    one query, CASE in SQL."""
    per_week = {
        f"w{index}": Coalesce(
            Sum(column, filter=Q(day__gte=monday, day__lt=monday + timedelta(days=7))), 0
        )
        for index, monday in enumerate(mondays)
    }
    rows = queryset.filter(day__gte=mondays[0], day__lt=mondays[-1] + timedelta(days=7))
    return list(rows.values(*group_by).annotate(**per_week).order_by())


def share(part: int, whole: int) -> float | None:
    return round(part / whole, 4) if whole else None


# Over the week's analyses whose report found a flood (`{analyses}`: id, stage, report).
FLOODS_SQL = {
    "postgresql": """
        SELECT g.value->>'template', MAX(g.value->>'example'), MAX(a.stage),
            SUM((g.value->>'count')::bigint), COUNT(DISTINCT a.id)
        FROM ({analyses}) a CROSS JOIN LATERAL jsonb_array_elements(
            CASE WHEN jsonb_typeof(a.report->'groups') = 'array' THEN a.report->'groups'
            ELSE '[]'::jsonb END) AS g(value)
        WHERE (g.value->>'flood') = 'true'
        GROUP BY 1 ORDER BY 4 DESC, 1 LIMIT %s
    """,
    "sqlite": """
        SELECT json_extract(g.value, '$.template'), MAX(json_extract(g.value, '$.example')),
            MAX(a.stage), SUM(json_extract(g.value, '$.count')), COUNT(DISTINCT a.id)
        FROM ({analyses}) a, json_each(a.report, '$.groups') AS g
        WHERE json_extract(g.value, '$.flood') = 1
        GROUP BY 1 ORDER BY 4 DESC, 1 LIMIT %s
    """,
}


def flooded_analyses(start: datetime, end: datetime) -> QuerySet[Analysis]:
    """Finished analyses of [start, end) whose report found a warning flood, through the index
    of those few: a week's reports without one are never opened."""
    return Analysis.objects.filter(
        created_at__gte=start, created_at__lt=end, flooded=True, status=Analysis.Status.DONE
    )


def floods(start: datetime, end: datetime) -> list[Flood]:
    """Warning floods in this week's analyses, read from the stored reports by the database."""
    connection = connections[Analysis.objects.db]
    sql = FLOODS_SQL.get(connection.vendor)
    if sql is None:
        return []
    subquery, params = (
        flooded_analyses(start, end)
        .values("id", "stage", "report")
        .order_by()
        .query.sql_with_params()
    )
    with connection.cursor() as cursor:
        cursor.execute(sql.format(analyses=subquery), [*params, LIST_LIMIT])
        return [
            Flood(
                template=template,
                example=example or "",
                stage=stage or "",
                lines=int(lines or 0),
                analyses=int(analyses),
            )
            for template, example, stage, lines, analyses in cursor.fetchall()
        ]


@dataclass(frozen=True)
class Window:
    """The week a report is about, and the weeks of its trend (the last of them is the week)."""

    week_start: date
    start: datetime
    end: datetime
    mondays: tuple[date, ...]

    @classmethod
    def of(cls, week_start: date, trend_weeks: int) -> Window:
        start, end = week_bounds(week_start)
        mondays = tuple(week_start - timedelta(weeks=n) for n in range(trend_weeks - 1, -1, -1))
        return cls(week_start, start, end, mondays)

    @property
    def week_end(self) -> date:
        return self.week_start + timedelta(days=7)

    @property
    def trend_start(self) -> datetime:
        return week_bounds(self.mondays[0])[0]

    @property
    def this(self) -> str:
        """The key of this week's column in `_weekly_counts` rows."""
        return f"w{len(self.mondays) - 1}"

    @property
    def before(self) -> str:
        return f"w{len(self.mondays) - 2}"


@dataclass(frozen=True)
class Failures:
    """New incidents and recurrences per stage and discipline, one count per trend week."""

    new: list[dict[str, Any]]
    recurred: list[dict[str, Any]]

    @classmethod
    def of(cls, window: Window) -> Failures:
        cells = ("stage", "discipline")
        new = weekly_sums(CellDay.objects.filter(filed__gt=0), "filed", window.mondays, cells)
        recurred = weekly_sums(
            CellDay.objects.filter(recurrences__gt=0), "recurrences", window.mondays, cells
        )
        return cls(new, recurred)

    def count(self, week: str, dimension: str, value: str) -> int:
        return sum(row[week] for row in (*self.new, *self.recurred) if row[dimension] == value)
