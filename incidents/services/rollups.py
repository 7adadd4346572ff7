"""Keeping the rollups (incidents.models.rollup) equal to what they count, in the transaction
of every write that changes a count: a recurrence recorded, moved or deleted, an analysis
stored or ranked again, feedback given, an incident filed, moved to another stage or
discipline, or deleted. `rollups_rebuild` recomputes everything (the `rebuild_rollups`
command, the migration that created them, bulk loads such as the demo data).

Locks (PostgreSQL): a writer holds its incidents' rows and the window states shared
(FOR SHARE); moving an incident holds its row exclusively, and so does rolling a window to a
new day. So a roll-over reads every count written before it, and a count written after it
sees the new day. SQLite runs one write transaction at a time (transaction_mode IMMEDIATE).
Counting from the rows (a window rolled to a new day, everything from scratch) is in
incidents.services.rollups_build.
"""

from __future__ import annotations

import threading
from collections import defaultdict
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from typing import Any

from django.db import connections, router, transaction
from django.db.models import Exists, OuterRef, QuerySet
from django.utils import timezone

from incidents.models import (
    Analysis,
    AnalysisDay,
    CellDay,
    Feedback,
    Incident,
    IncidentCell,
    IncidentDay,
    Recurrence,
    TagCell,
    TagCellDay,
    WindowState,
    WindowTotal,
)

# A tag's cell-day, as its rows are written here: tag, stage, discipline, day.
TAG_DAY_KEYS = ("tag_id", "stage", "discipline", "day")


@dataclass(frozen=True)
class Happened:
    """A change to how often an incident happened on a day."""

    incident_id: int
    day: date
    recurrences: int = 0
    analyses: int = 0


def local_day(moment: datetime) -> date:
    return timezone.localdate(moment, timezone.get_default_timezone())


def _db() -> str:
    return router.db_for_write(IncidentDay)


def _table(model) -> str:
    return connections[_db()].ops.quote_name(model._meta.db_table)


def _shared(sql: str) -> str:
    return sql + " FOR SHARE" if connections[_db()].vendor == "postgresql" else sql


def _exclusive(sql: str) -> str:
    return sql + " FOR UPDATE" if connections[_db()].vendor == "postgresql" else sql


def _as_date(value: Any) -> Any:
    """A date as the driver returns it (SQLite: ISO text)."""
    return date.fromisoformat(value) if isinstance(value, str) else value


def _upsert_sql(model, keys: tuple[str, ...], adds: tuple[str, ...], sets: tuple[str, ...] = ()):
    table = _table(model)
    columns = (*keys, *adds, *sets)
    updates = [f"{c} = {table}.{c} + excluded.{c}" for c in adds] + [
        f"{c} = excluded.{c}" for c in sets
    ]
    return (
        f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({', '.join(['%s'] * len(columns))})"
        f" ON CONFLICT ({', '.join(keys)}) DO UPDATE SET {', '.join(updates)}"
    )


def rollups_add(changes: Iterable[Happened], *, recount: bool = False) -> None:
    """Add these changes to every rollup; `recount` after an incident's recurrence count
    changed, which the windows copy for their tie-break."""
    totals: dict[tuple[int, date], list[int]] = defaultdict(lambda: [0, 0])
    for change in changes:
        total = totals[change.incident_id, change.day]
        total[0] += change.recurrences
        total[1] += change.analyses
    counts = {key: value for key, value in totals.items() if value != [0, 0]}
    ids = sorted({incident_id for incident_id, _ in totals})
    if not ids:
        return
    with transaction.atomic(using=_db()), connections[_db()].cursor() as cursor:
        cursor.execute(
            _shared(
                f"SELECT id, stage, discipline, recurrence_count FROM {_table(Incident)} "
                f"WHERE id IN ({', '.join(['%s'] * len(ids))})"
            ),
            ids,
        )
        incidents = {row[0]: row[1:] for row in cursor.fetchall()}
        # In key order, so that two writers lock the rows they share in the same order.
        counts = {key: value for key, value in sorted(counts.items()) if key[0] in incidents}
        cursor.executemany(
            _upsert_sql(IncidentDay, ("incident_id", "day"), ("recurrences", "analyses")),
            [(incident_id, day, r, a) for (incident_id, day), (r, a) in counts.items()],
        )
        cells: dict[tuple[str, str, date], list[int]] = defaultdict(lambda: [0, 0])
        for (incident_id, day), (r, a) in counts.items():
            stage, discipline, _ = incidents[incident_id]
            cells[stage, discipline, day][0] += r
            cells[stage, discipline, day][1] += a
        _cell_days(cursor, [(*key, r, a, 0) for key, (r, a) in sorted(cells.items())])
        tags = _tags_of(cursor, ids)
        tag_days: dict[tuple[int, str, str, date], int] = defaultdict(int)
        for (incident_id, day), (r, a) in counts.items():
            stage, discipline, _ = incidents[incident_id]
            for tag in tags.get(incident_id, ()):
                tag_days[tag, stage, discipline, day] += r + a
        _add_forgetting_zeros(
            cursor,
            TagCellDay,
            TAG_DAY_KEYS,
            "happened",
            [(*key, n) for key, n in sorted(tag_days.items()) if n],
        )
        cursor.execute(
            _shared(f"SELECT weeks, as_of FROM {_table(WindowState)} ORDER BY weeks"),
        )
        windows = [(weeks, _as_date(as_of)) for weeks, as_of in cursor.fetchall()]
        cursor.executemany(
            _upsert_sql(
                WindowTotal,
                ("weeks", "incident_id"),
                ("happened",),
                ("stage", "recurrence_count"),
            ),
            [
                (weeks, incident_id, r + a, incidents[incident_id][0], incidents[incident_id][2])
                for weeks, as_of in windows
                if as_of is not None
                for (incident_id, day), (r, a) in counts.items()
                if as_of - timedelta(weeks=weeks) < day <= as_of and r + a
            ],
        )
        if recount:
            cursor.executemany(
                f"UPDATE {_table(WindowTotal)} SET recurrence_count = %s WHERE incident_id = %s",
                [(incidents[pk][2], pk) for pk in ids if pk in incidents],
            )
        if any(min(value) < 0 for value in counts.values()):
            _forget_zeros(cursor, sorted({incident_id for incident_id, _ in counts}))


def _forget_zeros(cursor, incident_ids: list[int]) -> None:
    """A rollup row exists only where something happened: the rebuild makes no others."""
    marks = ", ".join(["%s"] * len(incident_ids))
    cursor.execute(
        f"DELETE FROM {_table(IncidentDay)} WHERE incident_id IN ({marks}) "
        "AND recurrences = 0 AND analyses = 0",
        incident_ids,
    )
    cursor.execute(
        f"DELETE FROM {_table(WindowTotal)} WHERE incident_id IN ({marks}) AND happened = 0",
        incident_ids,
    )
    _forget_empty_cells(cursor)


def _forget_empty_cells(cursor) -> None:
    cursor.execute(
        f"DELETE FROM {_table(CellDay)} WHERE recurrences = 0 AND analyses = 0 AND filed = 0"
    )


# --- what each write changes -----------------------------------------------------------------


def rollups_recurrence(recurrence: Recurrence, sign: int = 1) -> None:
    """A recurrence recorded (1) or deleted (-1), after the incident's recurrence count."""
    rollups_add(
        [Happened(recurrence.incident_id, recurrence.occurred_on, recurrences=sign)],
        recount=True,
    )


TREND: dict[tuple[str, bool], str] = {
    (Analysis.Status.DONE, True): "explained",
    (Analysis.Status.DONE, False): "unexplained",
    (Analysis.Status.FAILED, True): "failed",
    (Analysis.Status.FAILED, False): "failed",
}


def _analysis_state(analysis_id: int) -> tuple[Happened | None, date | None, str | None]:
    """How the matrix counts the analysis (finished, confident, its top incident known and
    nobody's feedback on that incident for it), and where the trend counts it."""
    answered = Feedback.objects.filter(analysis=OuterRef("pk"), incident=OuterRef("top_incident"))
    row = (
        Analysis.objects.filter(pk=analysis_id)
        .annotate(answered=Exists(answered))
        .values_list("status", "confident", "top_incident_id", "created_at", "answered")
        .first()
    )
    if row is None:
        return None, None, None
    status, confident, top, created, was_answered = row
    day = local_day(created)
    counted = status == Analysis.Status.DONE and confident and top and not was_answered
    trend = TREND.get((status, confident))
    return Happened(top, day, analyses=1) if counted else None, day, trend


def analysis_counted(analysis_id: int) -> Happened | None:
    """The analysis as the matrix counts it, or None."""
    return _analysis_state(analysis_id)[0]


def _trend_add(changes: dict[tuple[date, str], int]) -> None:
    columns = ("submitted", "explained", "unexplained", "failed")
    days: dict[date, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for (day, column), n in changes.items():
        days[day][columns.index(column)] += n
    with connections[_db()].cursor() as cursor:
        cursor.executemany(
            _upsert_sql(AnalysisDay, ("day",), columns),
            [(day, *counts) for day, counts in days.items() if any(counts)],
        )


def rollups_analysis_added(analysis_id: int) -> None:
    """After an analysis was stored (in the same transaction)."""
    counted, day, trend = _analysis_state(analysis_id)
    if counted:
        rollups_add([counted])
    if day is not None:
        _trend_add({(day, "submitted"): 1, **({(day, trend): 1} if trend else {})})


def rollups_analysis_failed(analysis_id: int) -> None:
    """After an analysis that was queued or running failed (in the same transaction)."""
    created = Analysis.objects.values_list("created_at", flat=True).get(pk=analysis_id)
    _trend_add({(local_day(created), "failed"): 1})


@contextmanager
def rollups_analysis_change(analysis_id: int) -> Iterator[None]:
    """Around a write that may change whether (or for which incident) an analysis counts, or
    how it stands in the trend; inside the transaction, the analysis row locked by the
    caller."""
    counted, day, trend = _analysis_state(analysis_id)
    yield
    now_counted, _, now_trend = _analysis_state(analysis_id)
    if counted != now_counted:
        gone = [Happened(counted.incident_id, counted.day, analyses=-1)] if counted else []
        rollups_add([*gone, *([now_counted] if now_counted else [])])
    if day is not None and trend != now_trend:
        changes = {(day, trend): -1} if trend else {}
        _trend_add({**changes, **({(day, now_trend): 1} if now_trend else {})})


# Analyses whose feedback is being deleted and that did not count before (one cascade deletes
# every row first, then reports each: the analysis must be counted once).
_uncounted = threading.local()


def _analysis_stays(origin: Any) -> bool:
    """Whether a deletion that started at `origin` leaves the analyses and incidents (their
    own deletion takes their counts away)."""
    model = origin.model if isinstance(origin, QuerySet) else type(origin)
    return model not in (Analysis, Incident)


def rollups_feedback_deleting(sender, instance: Feedback, origin=None, **kwargs) -> None:
    if not _analysis_stays(origin):
        return
    waiting = _uncounted.__dict__.setdefault("ids", set())
    if analysis_counted(instance.analysis_id) is None:
        waiting.add(instance.analysis_id)
    else:
        waiting.discard(instance.analysis_id)


def rollups_feedback_deleted(sender, instance: Feedback, origin=None, **kwargs) -> None:
    """After feedback was deleted by a cascade (a user deleted; an incident or analysis deleted
    leaves nothing to count): an analysis nobody answered on its top incident now counts."""
    if not _analysis_stays(origin):
        return
    waiting = _uncounted.__dict__.setdefault("ids", set())
    if instance.analysis_id in waiting and (counted := analysis_counted(instance.analysis_id)):
        waiting.discard(instance.analysis_id)
        rollups_add([counted])


def _cell_add(cursor, stage: str, discipline: str, n: int) -> None:
    cursor.execute(
        _upsert_sql(IncidentCell, ("stage", "discipline"), ("incidents",)), [stage, discipline, n]
    )


def _happened(cursor, incident_id: int) -> list[tuple[date, int, int]]:
    """An incident's days in the rollup: (day, recurrences, analyses)."""
    cursor.execute(
        f"SELECT day, recurrences, analyses FROM {_table(IncidentDay)} WHERE incident_id = %s",
        [incident_id],
    )
    return [(_as_date(day), r, a) for day, r, a in cursor.fetchall()]


def _days_of(
    incident: Incident, happened: list[tuple[date, int, int]], sign: int
) -> list[tuple[date, int, int, int]]:
    """What an incident adds to its cell's days (times `sign`): what happened, and its filing."""
    return [(day, sign * r, sign * a, 0) for day, r, a in happened] + [
        (local_day(incident.created_at), 0, 0, sign)
    ]


def _cell_days(cursor, rows: list[tuple[str, str, date, int, int, int]]) -> None:
    cursor.executemany(
        _upsert_sql(CellDay, ("stage", "discipline", "day"), ("recurrences", "analyses", "filed")),
        rows,
    )


def _tags_of(cursor, incident_ids: Iterable[int]) -> dict[int, list[int]]:
    """The tags of these incidents, by incident."""
    ids = list(incident_ids)
    if not ids:
        return {}
    cursor.execute(
        f"SELECT incident_id, tag_id FROM {_table(Incident.tags.through)} "
        f"WHERE incident_id IN ({', '.join(['%s'] * len(ids))}) ORDER BY tag_id",
        ids,
    )
    tags: dict[int, list[int]] = defaultdict(list)
    for incident_id, tag_id in cursor.fetchall():
        tags[incident_id].append(tag_id)
    return tags


def _add_forgetting_zeros(cursor, model, keys: tuple[str, ...], column: str, rows) -> None:
    """Add each row's last value to `column` of the `model` row named by the others (`keys`,
    in order); a row that comes to nothing goes."""
    cursor.executemany(_upsert_sql(model, keys, (column,)), rows)
    where = " AND ".join(f"{key} = %s" for key in keys)
    cursor.executemany(
        f"DELETE FROM {_table(model)} WHERE {where} AND {column} = 0",
        [row[:-1] for row in rows if row[-1] < 0],
    )


def _tagged(
    cursor,
    cell: tuple[str, str],
    tags: Iterable[int],
    happened: list[tuple[date, int, int]],
    sign: int,
) -> None:
    """What an incident of this stage × discipline `cell`, with these days, adds to its tags'
    cells (times `sign`)."""
    tags = list(tags)
    _add_forgetting_zeros(
        cursor,
        TagCell,
        ("tag_id", "stage", "discipline"),
        "incidents",
        [(tag, *cell, sign) for tag in tags],
    )
    _add_forgetting_zeros(
        cursor,
        TagCellDay,
        TAG_DAY_KEYS,
        "happened",
        [(tag, *cell, day, sign * (r + a)) for tag in tags for day, r, a in happened],
    )


def rollups_tags_changing(sender, instance, action, reverse, pk_set, **kwargs) -> None:
    """m2m_changed of Incident.tags, either side: tags added count the incident's history in
    their cells; tags about to be removed or cleared take it back (those it really has)."""
    if action == "post_add":
        pairs = [(pk, instance.pk) if reverse else (instance.pk, pk) for pk in pk_set]
        rollups_tagged(pairs, sign=1)
    elif action in ("pre_remove", "pre_clear"):
        links = {"tag_id" if reverse else "incident_id": instance.pk}
        if action == "pre_remove":
            links["incident_id__in" if reverse else "tag_id__in"] = pk_set
        found = Incident.tags.through.objects.filter(**links)
        rollups_tagged(found.values_list("incident_id", "tag_id"), sign=-1)


def rollups_tagged(pairs: Iterable[tuple[int, int]], *, sign: int) -> None:
    """(incident, tag) links made (1) or about to go (-1): the tags' cells follow. The
    incidents are held exclusively, so no count is added to them meanwhile."""
    tags: dict[int, list[int]] = defaultdict(list)
    for incident_id, tag_id in pairs:
        tags[incident_id].append(tag_id)
    if not tags:
        return
    ids = sorted(tags)
    with transaction.atomic(using=_db()), connections[_db()].cursor() as cursor:
        cursor.execute(
            _exclusive(
                f"SELECT id, stage, discipline FROM {_table(Incident)} "
                f"WHERE id IN ({', '.join(['%s'] * len(ids))}) ORDER BY id"
            ),
            ids,
        )
        for pk, stage, discipline in cursor.fetchall():
            _tagged(cursor, (stage, discipline), tags[pk], _happened(cursor, pk), sign)


def rollups_incident_filed(incident: Incident) -> None:
    with transaction.atomic(using=_db()), connections[_db()].cursor() as cursor:
        _cell_add(cursor, incident.stage, incident.discipline, 1)
        _cell_days(
            cursor, [(incident.stage, incident.discipline, local_day(incident.created_at), 0, 0, 1)]
        )


def rollups_incident_moved(incident: Incident, *, stage: str, discipline: str) -> None:
    """After an incident was saved whose stage and discipline were `stage`, `discipline` (its
    row locked by the caller): its counts move to its new cell. Its recurrence count is copied
    again too: a save writes the one it read (the admin's form)."""
    with transaction.atomic(using=_db()), connections[_db()].cursor() as cursor:
        cursor.execute(
            f"UPDATE {_table(WindowTotal)} SET recurrence_count = %s WHERE incident_id = %s",
            [incident.recurrence_count, incident.pk],
        )
        if (stage, discipline) == (incident.stage, incident.discipline):
            return
        was, now = (stage, discipline), (incident.stage, incident.discipline)
        happened = _happened(cursor, incident.pk)
        _cell_add(cursor, *was, -1)
        _cell_add(cursor, *now, 1)
        _cell_days(cursor, [(*was, *day) for day in _days_of(incident, happened, -1)])
        _cell_days(cursor, [(*now, *day) for day in _days_of(incident, happened, 1)])
        tags = _tags_of(cursor, [incident.pk]).get(incident.pk, [])
        _tagged(cursor, was, tags, happened, -1)
        _tagged(cursor, now, tags, happened, 1)
        cursor.execute(
            f"UPDATE {_table(WindowTotal)} SET stage = %s WHERE incident_id = %s",
            [incident.stage, incident.pk],
        )
        _forget_empty_cells(cursor)


def rollups_incident_removed(incident: Incident) -> None:
    """Before an incident is deleted (its own rollup rows go with it)."""
    with transaction.atomic(using=_db()), connections[_db()].cursor() as cursor:
        stored = (
            Incident.objects.select_for_update()
            .filter(pk=incident.pk)
            .only("stage", "discipline", "created_at")
            .first()
        )
        if stored is None:
            return
        cell = (stored.stage, stored.discipline)
        happened = _happened(cursor, stored.pk)
        _cell_add(cursor, *cell, -1)
        _cell_days(cursor, [(*cell, *day) for day in _days_of(stored, happened, -1)])
        _tagged(cursor, cell, _tags_of(cursor, [stored.pk]).get(stored.pk, []), happened, -1)
        _forget_empty_cells(cursor)
