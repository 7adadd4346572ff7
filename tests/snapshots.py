"""Seed once per session, hand each test the same rows.

Seeding the catalog runs every service a person's filing runs (validation, history, the
benign check), which is what the seed tests test, but far too slow to repeat before each of
the many tests that only need a populated book. `RowSnapshot.take` records what a seed wrote
to a set of tables; `restore` writes the same rows again, one multi-row INSERT per table.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.apps import apps
from django.core.management.color import no_style
from django.db import connection, models, transaction

Rows = list[tuple[type[models.Model], list[tuple[Any, ...]]]]


class RowSnapshot:
    def __init__(self, rows: Rows, base: dict[type[models.Model], int]):
        self.rows = rows  # each table's new rows as the database returned them, column order
        self.base = base  # the highest id of each table before the seed (rows a migration wrote)

    @classmethod
    def take(
        cls,
        seed: Callable[[], Any],
        app_labels: Iterable[str],
        leave_out: Iterable[type[models.Model]] = (),
    ) -> tuple[Any, RowSnapshot]:
        """Run `seed` in a transaction that is rolled back, keeping the rows it added to the
        tables of `app_labels` (but those of `leave_out`, which a test's own setup writes
        again); the database is left as it was."""
        skipped = set(leave_out)
        tables = [m for m in _models_in_dependency_order(app_labels) if m not in skipped]
        with transaction.atomic():
            base = {model: _max_pk(model) for model in tables}
            result = seed()
            rows = [(model, _rows_after(model, base[model])) for model in tables]
            transaction.set_rollback(True)
        rows = [(model, found) for model, found in rows if found]
        return result, cls(rows, {model: base[model] for model, _ in rows})

    def restore(self) -> dict[type[models.Model], int]:
        """Write the rows again as they were read (no model is built, no `auto_now` stamps
        a new time), and say how far each table's ids moved. Where a test already put rows
        in one of the tables, the snapshot's ids move past them, and every reference to a
        moved id moves along."""
        offsets = {model: max(0, _max_pk(model) - self.base[model]) for model, _ in self.rows}
        with transaction.atomic(), connection.cursor() as cursor:
            for model, rows in self.rows:
                columns = _columns(model)
                sql = "INSERT INTO {} ({}) VALUES ({})".format(
                    connection.ops.quote_name(model._meta.db_table),
                    ", ".join(connection.ops.quote_name(column) for column in columns),
                    ", ".join(["%s"] * len(columns)),
                )
                cursor.executemany(sql, _shifted(model, rows, offsets))
            for statement in connection.ops.sequence_reset_sql(
                no_style(), [model for model, _ in self.rows]
            ):
                cursor.execute(statement)
        return offsets


def _columns(model: type[models.Model]) -> list[str]:
    return [field.column for field in model._meta.concrete_fields]


def _rows_after(model: type[models.Model], base: int) -> list[tuple[Any, ...]]:
    quote = connection.ops.quote_name
    sql = "SELECT {} FROM {} WHERE {} > %s ORDER BY {}".format(
        ", ".join(quote(column) for column in _columns(model)),
        quote(model._meta.db_table),
        quote(model._meta.pk.column),
        quote(model._meta.pk.column),
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, [base])
        return [tuple(row) for row in cursor.fetchall()]


def _max_pk(model: type[models.Model]) -> int:
    found = model._base_manager.aggregate(top=models.Max("pk"))["top"]
    return found if isinstance(found, int) else 0


def _shifted(
    model: type[models.Model], rows: list[tuple[Any, ...]], offsets: dict
) -> list[tuple[Any, ...]]:
    """The rows moved by the offsets: their own id and every id they refer to (a history
    row's `id` is the id of the object it records)."""
    fields = model._meta.concrete_fields
    moves: dict[int, int] = {}
    for index, field in enumerate(fields):
        if field.primary_key and offsets.get(model):
            moves[index] = offsets[model]
        elif field.is_relation and offsets.get(field.related_model):
            moves[index] = offsets[field.related_model]
        elif field.attname == "id" and offsets.get(getattr(model, "instance_type", None)):
            moves[index] = offsets[model.instance_type]
    if not moves:
        return rows
    return [
        tuple(
            value + moves[index] if index in moves and value is not None else value
            for index, value in enumerate(row)
        )
        for row in rows
    ]


def _models_in_dependency_order(app_labels: Iterable[str]) -> list[type[models.Model]]:
    """Every concrete model of the apps (through tables and history included), each after
    the models its foreign keys point to."""
    wanted = [
        model
        for label in app_labels
        for model in apps.get_app_config(label).get_models(include_auto_created=True)
        if not model._meta.proxy
    ]
    ordered: list[type[models.Model]] = []

    def visit(model: type[models.Model], path: tuple = ()) -> None:
        if model in ordered or model in path:
            return
        for field in model._meta.concrete_fields:
            target = field.related_model
            if field.is_relation and target in wanted and target is not model:
                visit(target, (*path, model))
        ordered.append(model)

    for model in wanted:
        visit(model)
    return ordered
