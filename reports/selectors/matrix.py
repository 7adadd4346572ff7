"""The quick-reference matrix: each stage's incidents ranked by how often they happened in a
window, and the stage × discipline heat map. One ranking query plus one fetch of the texts shown,
both reading rollups (incidents.models.rollup), never the analyses themselves.

"How often an incident happened" in the window counts
  - its recurrences dated in the window (every "this fixed it" on an analysis already
    records one: see incidents.services.analysis_feedback), plus
  - confident analyses submitted in the window whose top suggestion it was and that nobody
    gave feedback on for it (a confirmation is already a recurrence, a "not it" was wrong).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Any

from django.db import connections
from django.db.models import QuerySet
from django.urls import reverse
from django.utils import timezone
from django.utils.http import urlencode

from common.choices import Discipline, Stage
from incidents.models import (
    TEXT_FIELDS,
    CellDay,
    Incident,
    IncidentCell,
    IncidentDay,
    Tag,
    TagCell,
    TagCellDay,
    WindowTotal,
)
from incidents.services.rollups_build import rollups_window
from reports.condense import (
    condense_prevention,
    condense_remedy,
    condense_root_cause,
    condense_symptom,
    condense_title,
)

MATRIX_WEEKS = 12
MATRIX_PER_STAGE = 8
HEAT_LEVELS = 5


@dataclass(frozen=True)
class MatrixParams:
    weeks: int = MATRIX_WEEKS
    tag: str = ""
    reporters: tuple[str, ...] = ()  # one username, or a team
    per_stage: int = MATRIX_PER_STAGE
    until: date | None = None  # last day of the window; today (site time) when None

    def window(self) -> tuple[date, date]:
        """First and last day of the window, both included."""
        end = self.until or timezone.localdate(timezone=timezone.get_default_timezone())
        return end - timedelta(weeks=self.weeks) + timedelta(days=1), end


@dataclass(frozen=True)
class MatrixEntry:
    slug: str
    url: str
    rank: int
    happened: int
    severity: str
    language: str  # of the text below: the UI language when a translation exists
    title: str
    symptom: str
    root_cause: str
    remedy_lead: str
    remedy_command: str
    discipline: str
    discipline_label: str
    prevention: str


@dataclass(frozen=True)
class MatrixRow:
    stage: str
    label: str
    entries: tuple[MatrixEntry, ...]


@dataclass(frozen=True)
class HeatCell:
    stage: str
    discipline: str
    happened: int
    incidents: int
    level: int  # 0 (nothing happened) … HEAT_LEVELS (the busiest cell)
    url: str


@dataclass(frozen=True)
class HeatRow:
    stage: str
    label: str
    cells: tuple[HeatCell, ...]


@dataclass(frozen=True)
class Matrix:
    params: MatrixParams
    start: date
    end: date
    rows: tuple[MatrixRow, ...]
    disciplines: tuple[tuple[str, str], ...]
    heat: tuple[HeatRow, ...]
    total_happened: int


# The narrow path (a tag or team filter, or a window the rollups do not count ahead): the
# filtered incidents with how often each happened, then the busiest few of each stage and one
# row per stage × discipline cell for the heat map (id NULL). How often: for a window counted
# ahead, one lookup per filtered incident in the window rollup (its unique index); else summed
# from the incident-day rollup over the window, for the filtered incidents only.
MATRIX_SQL = """
WITH filtered AS ({incidents}),
scored AS ({scored})
{top}
UNION ALL
SELECT NULL, stage, discipline, 0, SUM(happened), COUNT(*) FROM scored GROUP BY stage, discipline
"""
SCORED_BY_DAYS_SQL = """
    SELECT i.id, i.stage, i.discipline, i.recurrence_count, COALESCE(t.n, 0) AS happened
    FROM filtered i LEFT JOIN (
        SELECT d.incident_id, SUM(d.recurrences + d.analyses) AS n
        FROM {incident_day} d JOIN filtered f ON f.id = d.incident_id
        WHERE d.day >= %s AND d.day <= %s GROUP BY d.incident_id
    ) t ON t.incident_id = i.id
"""
SCORED_BY_WINDOW_SQL = """
    SELECT i.id, i.stage, i.discipline, i.recurrence_count, COALESCE((
        SELECT t.happened FROM {window_total} t WHERE t.weeks = %s AND t.incident_id = i.id
    ), 0) AS happened
    FROM filtered i
"""
MATRIX_TOP_SQL = """
SELECT * FROM (
    SELECT id, stage, discipline, recurrence_count, happened, 1 FROM scored WHERE stage = %s
    ORDER BY happened DESC, recurrence_count DESC, id LIMIT %s
) AS top_{n}
"""
# The fast path (no team filter, a window ending today): each stage's busiest few read off
# the window rollup's index, the stage's most recurring incidents to fill a quiet stage (twice
# as many: those that happened are among them), and the heat map from the cell rollups. Its
# cost depends on the number of stages, cells and days, not on the data. With a tag, the same
# for the tag's incidents only (the planner knows how common the tag is: a rare one is read
# from its own links, a common one filters the ranking index) and the tag's cell rollups.
WINDOW_TOP_SQL = """
SELECT * FROM (
    SELECT t.incident_id, t.stage, '', t.recurrence_count, t.happened, 1 FROM {window_total} t
    {tag_of_t}
    WHERE t.weeks = %s AND t.stage = %s
    ORDER BY t.happened DESC, t.recurrence_count DESC, t.incident_id LIMIT %s
) AS top_{n}
UNION ALL
SELECT * FROM (
    SELECT i.id, i.stage, '', i.recurrence_count, 0, 1 FROM {incident} i
    {tag_of_i}
    WHERE i.stage = %s
    ORDER BY i.recurrence_count DESC, i.id LIMIT %s
) AS fill_{n}
"""
TAG_OF = "JOIN {incident_tags} g ON g.incident_id = {alias} AND g.tag_id = %s"
WINDOW_CELLS_SQL = """
SELECT NULL, stage, discipline, 0, SUM(recurrences + analyses), 0 FROM {cell_day}
WHERE day >= %s AND day <= %s GROUP BY stage, discipline
UNION ALL
SELECT NULL, stage, discipline, 0, 0, incidents FROM {incident_cell}
"""
TAGGED_CELLS_SQL = """
SELECT NULL, stage, discipline, 0, SUM(happened), 0 FROM {tag_cell_day}
WHERE tag_id = %s AND day >= %s AND day <= %s GROUP BY stage, discipline
UNION ALL
SELECT NULL, stage, discipline, 0, 0, incidents FROM {tag_cell} WHERE tag_id = %s
"""


@dataclass(frozen=True)
class _Row:
    id: int | None  # None for a heat-map cell
    stage: str
    discipline: str
    recurrence_count: int
    happened: int
    incidents: int


MATRIX_TEXT_FIELDS = (
    "slug",
    "stage",
    "discipline",
    "severity",
    "language",
    "translations",
    *TEXT_FIELDS,
)


def matrix_incidents(params: MatrixParams) -> QuerySet[Incident]:
    """The incidents the matrix may show: the tag and team filters."""
    incidents = Incident.objects.order_by()
    if params.tag:
        incidents = incidents.filter(tags__name=params.tag.strip().lower())
    if params.reporters:
        incidents = incidents.filter(reporter__username__in=params.reporters)
    return incidents


def _tables(connection) -> dict[str, str]:
    return {
        name: connection.ops.quote_name(model._meta.db_table)
        for name, model in (
            ("incident", Incident),
            ("incident_day", IncidentDay),
            ("cell_day", CellDay),
            ("incident_cell", IncidentCell),
            ("window_total", WindowTotal),
            ("incident_tags", Incident.tags.through),
            ("tag_cell_day", TagCellDay),
            ("tag_cell", TagCell),
        )
    }


def _narrow_sql(
    params: MatrixParams, tables: dict[str, str], *, counted: bool
) -> tuple[str, list[Any]]:
    start, end = params.window()
    incidents = matrix_incidents(params).values("id", "stage", "discipline", "recurrence_count")
    sql, incident_params = incidents.query.sql_with_params()
    scored = (SCORED_BY_WINDOW_SQL if counted else SCORED_BY_DAYS_SQL).format(**tables)
    scored_params = [params.weeks] if counted else [start, end]
    top = "UNION ALL".join(MATRIX_TOP_SQL.format(n=n) for n in range(len(Stage.values)))
    top_params = [value for stage in Stage.values for value in (stage, params.per_stage)]
    return (
        MATRIX_SQL.format(incidents=sql, scored=scored, top=top),
        [*incident_params, *scored_params, *top_params],
    )


def _window_sql(params: MatrixParams, tables: dict[str, str]) -> tuple[str, list[Any]]:
    start, end = params.window()
    tag = _tag_id(params.tag) if params.tag else None
    joins = {"tag_of_t": "", "tag_of_i": ""}
    if tag is not None:
        joins = {
            f"tag_of_{alias}": TAG_OF.format(alias=f"{alias}.{column}", **tables)
            for alias, column in (("t", "incident_id"), ("i", "id"))
        }
    top = "UNION ALL".join(
        WINDOW_TOP_SQL.format(n=n, **tables, **joins) for n in range(len(Stage.values))
    )
    tagged = [] if tag is None else [tag]
    top_params = [
        value
        for stage in Stage.values
        for value in (
            *tagged,
            params.weeks,
            stage,
            params.per_stage,
            *tagged,
            stage,
            2 * params.per_stage,
        )
    ]
    if tag is None:
        return f"{top} UNION ALL {WINDOW_CELLS_SQL.format(**tables)}", [*top_params, start, end]
    cells = TAGGED_CELLS_SQL.format(**tables)
    return f"{top} UNION ALL {cells}", [*top_params, tag, start, end, tag]


def _tag_id(name: str) -> int:
    """The tag's id; 0 (no tag has it) for a name no tag has."""
    found = Tag.objects.filter(name=name.strip().lower()).values_list("pk", flat=True).first()
    return found or 0


def _counted(params: MatrixParams) -> bool:
    """Whether the rollups count this window ahead (rolling it to today if need be)."""
    today = timezone.localdate(timezone=timezone.get_default_timezone())
    return params.until in (None, today) and rollups_window(weeks=params.weeks, today=today)


def _ranked(rows: list[_Row], per_stage: int) -> list[_Row]:
    """Of the fast path's rows: each stage's busiest, then its most recurring to fill it."""
    ranked = []
    for stage in Stage.values:
        busy = [row for row in rows if row.stage == stage and row.happened > 0]
        shown = {row.id for row in busy}
        quiet = [row for row in rows if row.stage == stage and row.happened == 0]
        ranked += busy + [row for row in quiet if row.id not in shown][: per_stage - len(busy)]
    return ranked


def _heat_level(happened: int, busiest: int) -> int:
    if happened <= 0 or busiest <= 0:
        return 0
    return min(HEAT_LEVELS, 1 + (HEAT_LEVELS - 1) * happened // busiest)


def _cell_url(params: MatrixParams, stage: str, discipline: str) -> str:
    query = {"stage": stage, "discipline": discipline}
    if params.tag:
        query["tag"] = params.tag.strip().lower()
    if len(params.reporters) == 1:
        query["reporter"] = params.reporters[0]
    return reverse("incidents:incident-list") + "?" + urlencode(query)


def matrix_get(*, params: MatrixParams, language: str) -> Matrix:
    """The matrix in `language`: two queries (the ranking with the heat map, the texts), and
    on the rollups' paths one more to see that the window is counted up to today (and one to
    know a tag)."""
    start, end = params.window()
    connection = connections[Incident.objects.db]
    tables = _tables(connection)
    counted = _counted(params)
    fast = counted and not params.reporters
    sql, sql_params = (
        _window_sql(params, tables) if fast else _narrow_sql(params, tables, counted=counted)
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, sql_params)
        rows = [_Row(row[0], row[1], row[2], *(int(value) for value in row[3:])) for row in cursor]
    disciplines = tuple((str(value), str(label)) for value, label in Discipline.choices)
    cells: dict[tuple[str, str], _Row] = {}
    for row in rows:
        if row.id is None:
            cell = cells.get((row.stage, row.discipline))
            cells[row.stage, row.discipline] = (
                replace(
                    row,
                    happened=cell.happened + row.happened,
                    incidents=cell.incidents + row.incidents,
                )
                if cell
                else row
            )
    ranked = [row for row in rows if row.id is not None]
    return Matrix(
        params=params,
        start=start,
        end=end,
        rows=_matrix_rows(
            _ranked(ranked, params.per_stage) if fast else ranked, disciplines, language
        ),
        disciplines=disciplines,
        heat=_heat(params, cells, disciplines),
        total_happened=sum(row.happened for row in cells.values()),
    )


def _matrix_rows(
    ranked: list[_Row], disciplines: tuple[tuple[str, str], ...], language: str
) -> tuple[MatrixRow, ...]:
    """Each stage's busiest incidents, condensed to one line per column."""
    shown = sorted(ranked, key=lambda row: (-row.happened, -row.recurrence_count, row.id))
    texts = Incident.objects.only(*MATRIX_TEXT_FIELDS).in_bulk([row.id for row in shown])
    labels = dict(disciplines)
    matrix_rows = []
    for stage, stage_label in Stage.choices:
        entries = []
        for rank, row in enumerate((row for row in shown if row.stage == stage), start=1):
            incident = texts[row.id]
            text = incident.text(language)
            lead, command = condense_remedy(text.remedy)
            entries.append(
                MatrixEntry(
                    slug=incident.slug,
                    url=incident.get_absolute_url(),
                    rank=rank,
                    happened=row.happened,
                    severity=incident.severity,
                    language=text.language,
                    title=condense_title(text.title),
                    symptom=condense_symptom(text.symptom),
                    root_cause=condense_root_cause(text.root_cause),
                    remedy_lead=lead,
                    remedy_command=command,
                    discipline=incident.discipline,
                    discipline_label=labels.get(incident.discipline, incident.discipline),
                    prevention=condense_prevention(text.prevention),
                )
            )
        matrix_rows.append(MatrixRow(stage=stage, label=str(stage_label), entries=tuple(entries)))
    return tuple(matrix_rows)


def _heat(
    params: MatrixParams,
    cells: dict[tuple[str, str], _Row],
    disciplines: tuple[tuple[str, str], ...],
) -> tuple[HeatRow, ...]:
    """The stage × discipline heat map: how often each cell's incidents happened."""
    busiest = max((row.happened for row in cells.values()), default=0)
    return tuple(
        HeatRow(
            stage=stage,
            label=str(stage_label),
            cells=tuple(
                HeatCell(
                    stage=stage,
                    discipline=discipline,
                    happened=cell.happened if cell else 0,
                    incidents=cell.incidents if cell else 0,
                    level=_heat_level(cell.happened if cell else 0, busiest),
                    url=_cell_url(params, stage, discipline),
                )
                for discipline, _ in disciplines
                for cell in [cells.get((stage, discipline))]
            ),
        )
        for stage, stage_label in Stage.choices
    )
