"""Counting the rollups from the rows: a window of the matrix rolled to a new day (the days
that entered and left it), and every rollup from scratch (`rebuild_rollups`, the migration
that created them, bulk loads). See incidents.services.rollups for the locks."""

from __future__ import annotations

from datetime import date, timedelta

from django.apps import apps as global_apps
from django.db import connections, router, transaction
from django.db.models import Count, Exists, OuterRef, Q
from django.db.models.functions import TruncDate
from django.utils import timezone

from incidents.models import Incident, IncidentDay, WindowState, WindowTotal
from incidents.services.rollups import _db, _table

# The matrix's windows, in weeks (reports.forms.WINDOW_CHOICES): each is counted ahead.
WINDOWS = (4, 8, 12, 26, 52)


def rollups_window(*, weeks: int, today: date) -> bool:
    """Count the window of `weeks` weeks that ends `today`: a write once a day per window
    (the days that entered and left it), a no-op read otherwise. False for a window that is
    not counted ahead (see WINDOWS)."""
    if weeks not in WINDOWS:
        return False
    if WindowState.objects.filter(weeks=weeks, as_of=today).exists():
        return True
    with transaction.atomic(using=_db()):
        WindowState.objects.get_or_create(weeks=weeks)
        state = WindowState.objects.select_for_update().get(weeks=weeks)
        if state.as_of != today:
            _window_roll(weeks, state.as_of, today)
            WindowState.objects.filter(weeks=weeks).update(as_of=today)
    return True


WINDOW_DELTA_SQL = """
INSERT INTO {total} (weeks, incident_id, stage, recurrence_count, happened)
SELECT %s, d.incident_id, i.stage, i.recurrence_count,
    SUM(CASE WHEN d.day > %s THEN d.recurrences + d.analyses
        ELSE -(d.recurrences + d.analyses) END)
FROM {day} d JOIN {incident} i ON i.id = d.incident_id
WHERE (d.day > %s AND d.day <= %s) OR (d.day > %s AND d.day <= %s)
GROUP BY d.incident_id, i.stage, i.recurrence_count
ON CONFLICT (weeks, incident_id) DO UPDATE SET happened = {total}.happened + excluded.happened
"""
WINDOW_FILL_SQL = """
INSERT INTO {total} (weeks, incident_id, stage, recurrence_count, happened)
SELECT %s, d.incident_id, i.stage, i.recurrence_count, SUM(d.recurrences + d.analyses)
FROM {day} d JOIN {incident} i ON i.id = d.incident_id
WHERE d.day > %s AND d.day <= %s
GROUP BY d.incident_id, i.stage, i.recurrence_count
"""


def _window_sql(template: str) -> str:
    return template.format(
        total=_table(WindowTotal), day=_table(IncidentDay), incident=_table(Incident)
    )


def _window_roll(weeks: int, as_of: date | None, today: date) -> None:
    span = timedelta(weeks=weeks)
    with connections[_db()].cursor() as cursor:
        if as_of is None or as_of > today or today - as_of >= span:
            cursor.execute(f"DELETE FROM {_table(WindowTotal)} WHERE weeks = %s", [weeks])
            cursor.execute(_window_sql(WINDOW_FILL_SQL), [weeks, today - span, today])
            return
        cursor.execute(
            _window_sql(WINDOW_DELTA_SQL),
            [weeks, as_of, as_of, today, as_of - span, today - span],
        )
        cursor.execute(
            f"DELETE FROM {_table(WindowTotal)} WHERE weeks = %s AND happened = 0", [weeks]
        )


# --- from scratch ----------------------------------------------------------------------------


SOURCES = ("Incident", "Recurrence", "Analysis", "Feedback")
ROLLUPS = (
    "IncidentDay",
    "CellDay",
    "AnalysisDay",
    "IncidentCell",
    "WindowState",
    "WindowTotal",
    "TagCellDay",
    "TagCell",
)


def rollups_rebuild(*, apps=global_apps, using: str | None = None, today: date | None = None):
    """Recompute every rollup from the recurrences, analyses, feedback and incidents. Writers
    wait meanwhile (PostgreSQL: the rollup tables are locked). `apps` is a migration's."""
    models = {name: apps.get_model("incidents", name) for name in SOURCES}
    # A migration older than some rollup counts those that exist at its point.
    rollups = [name for name in ROLLUPS if _has_model(apps, name)]
    models |= {name: apps.get_model("incidents", name) for name in rollups}
    using = using or router.db_for_write(models["IncidentDay"])
    connection = connections[using]
    table = _tables(models, connection)
    today = today or timezone.localdate(timezone=timezone.get_default_timezone())
    sources = _counted_sources(models, using)
    with transaction.atomic(using=using), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            names = ", ".join(table[name] for name in rollups)
            cursor.execute(f"LOCK TABLE {names} IN EXCLUSIVE MODE")
        for name in rollups:
            cursor.execute(f"DELETE FROM {table[name]}")
        _count_days(cursor, table, sources)
        _count_windows(cursor, table, today)
        if "TagCell" in rollups:
            _count_tags(cursor, table)


def _tables(models: dict, connection) -> dict[str, str]:
    """The quoted table of each model by its name, and of the incidents' tag links."""
    tags = models["Incident"]._meta.get_field("tags").remote_field.through
    named = {**models, "IncidentTags": tags}
    return {name: connection.ops.quote_name(model._meta.db_table) for name, model in named.items()}


def _has_model(apps, name: str) -> bool:
    try:
        apps.get_model("incidents", name)
    except LookupError:
        return False
    return True


def _counted_sources(models: dict, using: str) -> dict[str, tuple[str, tuple]]:
    """The SQL (and parameters) of what the rollups count, per source: recurrences per
    incident and day, counted analyses per top incident and day, incidents filed per cell and
    day, and the analyses' trend per day."""
    tz = timezone.get_default_timezone()
    recurrences = (
        models["Recurrence"]
        .objects.using(using)
        .values("incident_id", "occurred_on")
        .annotate(n=Count("pk"))
        .order_by()
    )
    answered = models["Feedback"].objects.filter(
        analysis=OuterRef("pk"), incident=OuterRef("top_incident")
    )
    analyses = (
        models["Analysis"]
        .objects.using(using)
        .filter(Q(status="done", confident=True, top_incident__isnull=False), ~Exists(answered))
        .annotate(day=TruncDate("created_at", tzinfo=tz))
        .values("top_incident_id", "day")
        .annotate(n=Count("pk"))
        .order_by()
    )
    filed = (
        models["Incident"]
        .objects.using(using)
        .annotate(day=TruncDate("created_at", tzinfo=tz))
        .values("stage", "discipline", "day")
        .annotate(n=Count("pk"))
        .order_by()
    )
    done, failed = Q(status="done"), Q(status="failed")
    trend = (
        models["Analysis"]
        .objects.using(using)
        .annotate(day=TruncDate("created_at", tzinfo=tz))
        .values("day")
        .annotate(
            submitted=Count("pk"),
            explained=Count("pk", filter=done & Q(confident=True)),
            unexplained=Count("pk", filter=done & Q(confident=False)),
            failed=Count("pk", filter=failed),
        )
        .order_by()
    )
    queries = {"recurrences": recurrences, "analyses": analyses, "filed": filed, "trend": trend}
    return {name: query.query.sql_with_params() for name, query in queries.items()}


def _count_days(cursor, table: dict[str, str], sources: dict[str, tuple[str, tuple]]) -> None:
    """Fill the per-day rollups and the incidents per cell from the counted sources."""
    (r_sql, r_params), (a_sql, a_params) = sources["recurrences"], sources["analyses"]
    (f_sql, f_params), (t_sql, t_params) = sources["filed"], sources["trend"]
    cursor.execute(
        f"INSERT INTO {table['IncidentDay']} (incident_id, day, recurrences, analyses) "
        "SELECT h.incident_id, h.day, SUM(h.r), SUM(h.a) FROM ("
        f"SELECT r.incident_id AS incident_id, r.occurred_on AS day, r.n AS r, 0 AS a "
        f"FROM ({r_sql}) r UNION ALL "
        f"SELECT a.top_incident_id, a.day, 0, a.n FROM ({a_sql}) a"
        ") h GROUP BY h.incident_id, h.day",
        [*r_params, *a_params],
    )
    cursor.execute(
        f"INSERT INTO {table['CellDay']} "
        "(stage, discipline, day, recurrences, analyses, filed) "
        "SELECT c.stage, c.discipline, c.day, SUM(c.r), SUM(c.a), SUM(c.f) FROM ("
        "SELECT i.stage AS stage, i.discipline AS discipline, d.day AS day, "
        "d.recurrences AS r, d.analyses AS a, 0 AS f "
        f"FROM {table['IncidentDay']} d JOIN {table['Incident']} i ON i.id = d.incident_id "
        f"UNION ALL SELECT n.stage, n.discipline, n.day, 0, 0, n.n FROM ({f_sql}) n"
        ") c GROUP BY c.stage, c.discipline, c.day",
        f_params,
    )
    cursor.execute(
        f"INSERT INTO {table['AnalysisDay']} "
        "(day, submitted, explained, unexplained, failed) "
        f"SELECT t.day, t.submitted, t.explained, t.unexplained, t.failed FROM ({t_sql}) t",
        t_params,
    )
    cursor.execute(
        f"INSERT INTO {table['IncidentCell']} (stage, discipline, incidents) "
        f"SELECT stage, discipline, COUNT(*) FROM {table['Incident']} "
        "GROUP BY stage, discipline"
    )


def _count_windows(cursor, table: dict[str, str], today: date) -> None:
    """Each matrix window's totals per incident, as of `today`."""
    fill = WINDOW_FILL_SQL.format(
        total=table["WindowTotal"], day=table["IncidentDay"], incident=table["Incident"]
    )
    for weeks in WINDOWS:
        cursor.execute(
            f"INSERT INTO {table['WindowState']} (weeks, as_of) VALUES (%s, %s)",
            [weeks, today],
        )
        cursor.execute(fill, [weeks, today - timedelta(weeks=weeks), today])


def rollups_count_tags(*, apps, using: str) -> None:
    """Count the tags' cells of an existing history (the migration that created them)."""
    names = ("Incident", "IncidentDay", "TagCellDay", "TagCell")
    connection = connections[using]
    table = _tables({name: apps.get_model("incidents", name) for name in names}, connection)
    with transaction.atomic(using=using), connection.cursor() as cursor:
        _count_tags(cursor, table)


def _count_tags(cursor, table: dict[str, str]) -> None:
    """Each tag's cells: how often its incidents happened per day, and how many it holds."""
    cursor.execute(
        f"INSERT INTO {table['TagCellDay']} (tag_id, stage, discipline, day, happened) "
        "SELECT t.tag_id, i.stage, i.discipline, d.day, SUM(d.recurrences + d.analyses) "
        f"FROM {table['IncidentDay']} d JOIN {table['Incident']} i ON i.id = d.incident_id "
        f"JOIN {table['IncidentTags']} t ON t.incident_id = d.incident_id "
        "GROUP BY t.tag_id, i.stage, i.discipline, d.day "
        "HAVING SUM(d.recurrences + d.analyses) <> 0"
    )
    cursor.execute(
        f"INSERT INTO {table['TagCell']} (tag_id, stage, discipline, incidents) "
        "SELECT t.tag_id, i.stage, i.discipline, COUNT(*) "
        f"FROM {table['IncidentTags']} t JOIN {table['Incident']} i ON i.id = t.incident_id "
        "GROUP BY t.tag_id, i.stage, i.discipline"
    )
