"""Edit histories, read from django-simple-history's records: who changed what, and when."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Model, QuerySet


@dataclass(frozen=True)
class Change:
    field: str  # the field's name as people read it
    old: object
    new: object


@dataclass(frozen=True)
class HistoryEntry:
    when: datetime
    who: object  # the user, or None for the product itself (seeding)
    kind: str  # "+" created, "~" changed, "-" deleted
    reason: str
    changes: tuple[Change, ...] = ()  # field by field, where the record keeps them


# What django-simple-history reads off an instance when it records the next save.
_HISTORY_USER, _CHANGE_REASON = "_history_user", "_change_reason"


_UNSET = object()


def history_note(obj: Model, *, by: object = _UNSET, reason: str = "") -> None:
    """What the history record of `obj`'s next save says: who changed it (None: the product
    itself; not given: the user of the request, as the history middleware knows it) and why
    (a message marked for translation)."""
    if by is not _UNSET:
        setattr(obj, _HISTORY_USER, by)
    if reason:
        setattr(obj, _CHANGE_REASON, reason)


def history_entries(
    records: QuerySet, *, model: type[Model], fields: Sequence[str] = (), limit: int
) -> list[HistoryEntry]:
    """The newest `limit` records as entries; with `fields`, each says what changed in them
    since the record before it."""
    rows = list(records.select_related("history_user")[: limit + 1])
    entries = []
    for record, previous in zip(rows[:limit], [*rows[1:], None], strict=False):
        changes: tuple[Change, ...] = ()
        if fields and previous is not None:
            delta = record.diff_against(previous, included_fields=list(fields))
            changes = tuple(
                Change(_field_name(model, c.field), c.old, c.new) for c in delta.changes
            )
        entries.append(
            HistoryEntry(
                when=record.history_date,
                who=record.history_user,
                kind=record.history_type,
                reason=record.history_change_reason or "",
                changes=changes,
            )
        )
    return entries


def _field_name(model: type[Model], name: str) -> str:
    field = model._meta.get_field(name)
    return str(getattr(field, "verbose_name", name))
