"""Seed once per session, hand each test the same rows.

Seeding the catalog runs every service a person's filing runs (validation, history, the
benign check), which is what the seed tests test, but far too slow to repeat before each of
the many tests that only need a populated book. `RowSnapshot.take` records what a seed wrote
to a set of tables; `restore` writes the same rows again with a few bulk inserts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from django.apps import apps
from django.core.management.color import no_style
from django.db import connection, models, transaction


class RowSnapshot:
    def __init__(self, rows: list[tuple[type[models.Model], list[dict[str, Any]]]]):
        self.rows = rows

    @classmethod
    def take(cls, seed: Callable[[], Any], app_labels: Iterable[str]) -> tuple[Any, RowSnapshot]:
        """Run `seed` in a transaction that is rolled back, keeping what it wrote to the
        tables of `app_labels`; the database is left as it was."""
        tables = _models_in_dependency_order(app_labels)
        with transaction.atomic():
            before = {model: model._base_manager.count() for model in tables}
            if any(before.values()):
                raise RuntimeError(f"seed snapshot wants empty tables: {before}")
            result = seed()
            rows = [
                (model, list(model._base_manager.order_by("pk").values()))
                for model in tables
                if model._base_manager.exists()
            ]
            transaction.set_rollback(True)
        return result, cls(rows)

    def restore(self) -> None:
        """Write the rows again. Where a test already put rows in one of the tables, the
        snapshot's ids move past them, and every reference to a moved id moves along."""
        offsets = {model: _max_pk(model) for model, _ in self.rows}
        with transaction.atomic():
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
