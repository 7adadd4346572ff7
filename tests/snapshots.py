"""Seed once per session, hand each test the same rows.

Seeding the catalog runs every service a person's filing runs (validation, history, the
benign check), which is what the seed tests test, but far too slow to repeat before each of
the many tests that only need a populated book. `RowSnapshot.take` records what a seed wrote
to a set of tables; `restore` writes the same rows again with a few bulk inserts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from django.apps import apps
from django.core.management.color import no_style
from django.db import connection, models, transaction


class RowSnapshot:
    def __init__(
        self,
        rows: list[tuple[type[models.Model], list[dict[str, Any]]]],
        base: dict[type[models.Model], int],
    ):
        self.rows = rows
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
            rows = [
                (
                    model,
                    list(model._base_manager.filter(pk__gt=base[model]).order_by("pk").values()),
                )
                for model in tables
            ]
            transaction.set_rollback(True)
        rows = [(model, found) for model, found in rows if found]
        return result, cls(rows, {model: base[model] for model, _ in rows})

    def restore(self) -> dict[type[models.Model], int]:
        """Write the rows again, and say how far each table's ids moved. Where a test already
        put rows in one of the tables, the snapshot's ids move past them, and every reference
        to a moved id moves along."""
        offsets = {model: max(0, _max_pk(model) - self.base[model]) for model, _ in self.rows}
        with transaction.atomic(), _clock_stopped([model for model, _ in self.rows]):
            for model, rows in self.rows:
                shift = _shifter(model, offsets)
                model._base_manager.bulk_create(model(**shift(row)) for row in rows)
            statements = connection.ops.sequence_reset_sql(
                no_style(), [model for model, _ in self.rows]
            )
            if statements:
                with connection.cursor() as cursor:
                    for sql in statements:
                        cursor.execute(sql)
        return offsets


@contextmanager
def _clock_stopped(tables: list[type[models.Model]]) -> Iterator[None]:
    """Keep the recorded times: `auto_now` fields would stamp the restore's own time (and an
    edit form's revision, which is its `updated_at`, would then be stale)."""
    stamped = [
        (field, field.auto_now, field.auto_now_add)
        for model in tables
        for field in model._meta.concrete_fields
        if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False)
    ]
    for field, _, _ in stamped:
        field.auto_now = field.auto_now_add = False
    try:
        yield
    finally:
        for field, auto_now, auto_now_add in stamped:
            field.auto_now, field.auto_now_add = auto_now, auto_now_add


def _max_pk(model: type[models.Model]) -> int:
    found = model._base_manager.aggregate(top=models.Max("pk"))["top"]
    return found if isinstance(found, int) else 0


def _shifter(model: type[models.Model], offsets: dict) -> Callable[[dict], dict]:
    """What moves a row of `model` by the offsets: its own id and every id it refers to
    (a history row's `id` is the id of the object it records)."""
    moves: dict[str, int] = {}
    if offsets.get(model):
        moves[model._meta.pk.attname] = offsets[model]
    recorded = getattr(model, "instance_type", None)
    if offsets.get(recorded):
        moves["id"] = offsets[recorded]
    for field in model._meta.concrete_fields:
        if field.is_relation and offsets.get(field.related_model):
            moves[field.attname] = offsets[field.related_model]
    if not moves:
        return dict

    def shift(row: dict) -> dict:
        return {
            name: value + moves[name] if name in moves and value is not None else value
            for name, value in row.items()
        }

    return shift


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
