"""Pages of a list followed by cursor: a deep page costs what the first one does.

A cursor holds the values, in the list's whole order, of the row a page ended on; the next page
is the rows after it, found through the index of that order rather than by counting past every
row before it (OFFSET), and no page counts the whole list. The order is the list's own (a
sort, a search's relevance, the model's default) with the id added last, so it is unique and
no row is skipped or repeated between pages. The API's lists (incidents/api/pagination.py) and
the pages' long lists both page this way.
"""

from __future__ import annotations

import binascii
import json
from base64 import urlsafe_b64decode, urlsafe_b64encode
from dataclasses import dataclass
from datetime import date, time
from decimal import Decimal
from typing import Any
from uuid import UUID

from django.core.exceptions import FieldDoesNotExist
from django.db import connections
from django.db.models import F, Q
from django.db.models.expressions import OrderBy
from django.http import QueryDict

# Databases where NULL sorts after every value in ascending order (SQLite and MySQL: before).
NULLS_LARGEST = frozenset({"postgresql", "oracle"})


@dataclass(frozen=True)
class Key:
    """One term of a list's order, and where a row holds its value."""

    name: str  # the term as ordered by: a cursor made for another order is refused
    attribute: str  # the row's attribute, and the name filters use
    descending: bool
    nulls_largest: bool  # where NULL sorts, as if it were a value
    nullable: bool  # a NOT NULL column gets no IS NULL test, which would cost its index range
    nulls_explicit: bool  # the order said NULLS FIRST/LAST itself (else the database's own)

    def order(self, reverse: bool) -> OrderBy:
        descending = self.descending != reverse
        if not self.nulls_explicit:
            return OrderBy(F(self.attribute), descending=descending)
        last = self.nulls_largest != descending
        return OrderBy(
            F(self.attribute),
            descending=descending,
            nulls_last=last or None,
            nulls_first=not last or None,
        )

    def at_or_after(self, value: Any, reverse: bool) -> Q:
        """Rows at the value or after it: a range the index of the order serves."""
        descending = self.descending != reverse
        nulls_after = self.nullable and self.nulls_largest != descending
        if value is None:
            return Q(**{f"{self.attribute}__isnull": True}) if nulls_after else Q()
        at_or_after = Q(**{f"{self.attribute}__{'lte' if descending else 'gte'}": value})
        return (
            at_or_after | Q(**{f"{self.attribute}__isnull": True}) if nulls_after else at_or_after
        )

    def after(self, value: Any, reverse: bool) -> Q:
        descending = self.descending != reverse
        nulls_after = self.nullable and self.nulls_largest != descending
        if value is None:
            return Q(pk__in=[]) if nulls_after else Q(**{f"{self.attribute}__isnull": False})
        after = Q(**{f"{self.attribute}__{'lt' if descending else 'gt'}": value})
        return after | Q(**{f"{self.attribute}__isnull": True}) if nulls_after else after

    def equal(self, value: Any) -> Q:
        if value is None:
            return Q(**{f"{self.attribute}__isnull": True})
        return Q(**{self.attribute: value})


def order_keys(queryset) -> tuple[list[Key], dict[str, Any]]:
    """The queryset's order as keys, its primary key last, and the annotations that let a row
    hold the value of each term that is not one of its own columns."""
    query = queryset.query
    meta = queryset.model._meta
    terms = list(query.order_by) or (list(meta.ordering) if query.default_ordering else [])
    native_nulls_largest = connections[queryset.db].vendor in NULLS_LARGEST
    keys, annotations = [], {}
    for n, term in enumerate(terms):
        expression: Any
        if isinstance(term, str):
            name, expression = term.lstrip("-"), F(term.lstrip("-"))
            descending, nulls_first, nulls_last = term.startswith("-"), False, False
        elif isinstance(term, OrderBy):
            expression, descending = term.expression, term.descending
            nulls_first, nulls_last = bool(term.nulls_first), bool(term.nulls_last)
            name = expression.name if isinstance(expression, F) else f"expression {n}"
        else:
            raise TypeError(f"cannot page by cursor over the order {term!r}")
        attribute, nullable = _attribute(meta, name, query.annotations)
        if attribute is None:
            attribute = f"cursor_{n}"
            annotations[attribute] = expression
        explicit = nulls_first or nulls_last
        nulls_largest = (nulls_last != descending) if explicit else native_nulls_largest
        keys.append(Key(str(term), attribute, descending, nulls_largest, nullable, explicit))
    if not any(key.attribute == meta.pk.attname for key in keys):
        descending = keys[-1].descending if keys else True
        keys.append(Key("pk", meta.pk.attname, descending, False, False, False))
    return keys, annotations


def _attribute(meta, name: str, annotations) -> tuple[str | None, bool]:
    """The attribute of a row that holds `name`'s value, if one does, and whether it can be
    NULL (an expression or a value across a relation might be)."""
    if name == "pk":
        return meta.pk.attname, False
    if name in annotations:
        return name, True
    try:
        field = meta.get_field(name)
    except FieldDoesNotExist:
        return None, True
    if field.is_relation and name != field.attname:
        return None, True
    return field.attname, field.null


class _Encoder(json.JSONEncoder):
    """Dates and times in full: DjangoJSONEncoder keeps only milliseconds, and a position a
    microsecond off would skip or repeat rows."""

    def default(self, o):
        if isinstance(o, date | time):
            return o.isoformat()
        if isinstance(o, Decimal | UUID):
            return str(o)
        return super().default(o)


def keyset_after(keys: list[Key], values: list[Any], reverse: bool) -> Q:
    """Rows after the position `values` in the order (before it when `reverse`)."""
    after = Q(pk__in=[])
    for i, key in enumerate(keys):
        step = key.after(values[i], reverse)
        for earlier, value in zip(keys[:i], values[:i], strict=True):
            step &= earlier.equal(value)
        after |= step
    # The same rows; this term alone is a range that the order's index serves.
    return keys[0].at_or_after(values[0], reverse) & after


def cursor_encode(names: list[str], values: list[Any], *, reverse: bool = False) -> str:
    """The cursor of the position `values` in the order `names` (the terms, the id last)."""
    body = {"k": names, "v": values, "r": int(reverse)}
    text = json.dumps(body, cls=_Encoder, ensure_ascii=True, separators=(",", ":"))
    return urlsafe_b64encode(text.encode()).decode().rstrip("=")


class CursorInvalid(ValueError):
    """A cursor that is not a position in this list's order (garbled, or made for another
    sort)."""


def cursor_decode(encoded: str, keys: list[Key]) -> tuple[list[Any], bool]:
    """The position and direction a cursor of the order `keys` holds."""
    try:
        body = json.loads(urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
        names, values, reverse = body["k"], body["v"], bool(body["r"])
    except (ValueError, TypeError, KeyError, binascii.Error) as error:
        raise CursorInvalid(encoded) from error
    if names != [key.name for key in keys] or len(values) != len(keys):
        raise CursorInvalid(encoded)  # made for another order (a sort changed since)
    return values, reverse


FIRST_PAGE = ""  # the cursor of the first page: none


@dataclass(frozen=True)
class KeysetPage:
    """One page of a list. `next` and `previous` are the cursors of the pages around it, None
    when there is none; FIRST_PAGE is the first page's."""

    rows: list
    next: str | None
    previous: str | None

    def __iter__(self):
        return iter(self.rows)

    @property
    def has_other_pages(self) -> bool:
        return self.next is not None or self.previous is not None


def keyset_page(
    queryset, *, cursor: str | None, size: int, rare_filters: bool = False
) -> KeysetPage:
    """The `size` rows of `queryset` after the position `cursor` names (the first ones without
    it), in the queryset's order; raises CursorInvalid for a cursor of another order.

    `rare_filters`: the queryset's filters may match few rows that no index of the order finds
    (the incident list's facets); its page is then looked for as `_first_filtered` says."""
    keys, annotations = order_keys(queryset)
    position, reverse = cursor_decode(cursor, keys) if cursor else (None, False)
    filtered = bool(queryset.query.where)
    after = keyset_after(keys, position, reverse) if position is not None else Q()
    ordered = (
        queryset.annotate(**annotations)
        .filter(after)
        .order_by(*(key.order(reverse) for key in keys))
    )
    columns = _columns(ordered, keys) if rare_filters and filtered else None
    if columns:
        rows = _first_filtered(ordered, after, keys, columns, reverse, size + 1)
    else:
        rows = list(ordered[: size + 1])
    more = len(rows) > size
    rows = rows[:size]
    if reverse:
        rows.reverse()
    has_next = more if not reverse else True
    has_previous = more if reverse else position is not None

    def cursor_at(row, *, backward: bool) -> str:
        values = [getattr(row, key.attribute) for key in keys]
        return cursor_encode([key.name for key in keys], values, reverse=backward)

    following = cursor_at(rows[-1], backward=False) if has_next and rows else None
    preceding = None
    if has_previous:
        # Nothing after the position: the page before is all before it, the first page.
        preceding = cursor_at(rows[0], backward=True) if rows else FIRST_PAGE
    return KeysetPage(rows=rows, next=following, previous=preceding)


# A filtered list is read by walking the index of its order and testing each row: quick when
# many rows match, but when few do (two filters that rarely meet) the walk reads the whole
# table to find a page, or to learn there is none. So a filtered page is looked for first among
# the rows that come first in the order unfiltered, a bounded walk (PROBE_ROWS_PER_ROW for each
# row asked, PROBE_ROWS at least); only when fewer match there are the matches read by the
# filters' own indexes and sorted, and those are then rare.
PROBE_ROWS = 2000
PROBE_ROWS_PER_ROW = 40


def _columns(queryset, keys: list[Key]) -> list[str] | None:
    """The columns of the order's keys, when each is a column of the queryset's own table."""
    attributes = {field.attname: field.column for field in queryset.model._meta.concrete_fields}
    if not all(key.attribute in attributes for key in keys):
        return None
    return [attributes[key.attribute] for key in keys]


def _first_filtered(
    ordered, after: Q, keys: list[Key], columns: list[str], reverse: bool, count: int
) -> list:
    """The first `count` rows of a filtered, ordered queryset (after the position `after`),
    without walking the whole table when its rows are few."""
    window = max(PROBE_ROWS, PROBE_ROWS_PER_ROW * count)
    unfiltered = (
        ordered.model._base_manager.using(ordered.db)
        .filter(after)
        .order_by(*(key.order(reverse) for key in keys))
    )
    first = keys[0]
    edge = list(unfiltered.values_list(first.attribute, flat=True)[window - 1 : window])
    if not edge:  # the table holds no more than the window: walking it is bounded
        return list(ordered[:count])
    # The rows up to the edge, in the order: a range of the first key's index.
    within = ordered.filter(first.at_or_after(edge[0], not reverse))
    rows = list(within[:count])
    if len(rows) == count:
        return rows
    return _rare_rows(ordered, keys, columns, reverse, count)


def _rare_rows(ordered, keys: list[Key], columns: list[str], reverse: bool, count: int) -> list:
    """The first `count` rows of the queryset's matches, read through its filters' indexes and
    then sorted: the subquery fence (OFFSET 0) keeps the database from walking the order's
    index instead, which it would choose by guessing the filters independent."""
    connection = connections[ordered.db]
    meta = ordered.model._meta
    selected = list(dict.fromkeys([meta.pk.attname, *(key.attribute for key in keys)]))
    sql, params = ordered.order_by().values_list(*selected).query.sql_with_params()
    quote = connection.ops.quote_name
    order = ", ".join(
        _order_sql(key, quote(column), reverse) for key, column in zip(keys, columns, strict=True)
    )
    fence = "OFFSET 0" if connection.vendor == "postgresql" else "LIMIT -1 OFFSET 0"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {quote(meta.pk.column)} FROM ({sql} {fence}) AS matches "
            f"ORDER BY {order} LIMIT %s",
            [*params, count],
        )
        pks = list(dict.fromkeys(row[0] for row in cursor.fetchall()))
    found = {row.pk: row for row in ordered.filter(pk__in=pks)}
    return [found[pk] for pk in pks if pk in found]


def _order_sql(key: Key, column: str, reverse: bool) -> str:
    """One term of ORDER BY as `Key.order` writes it."""
    descending = key.descending != reverse
    sql = f"{column} {'DESC' if descending else 'ASC'}"
    if key.nulls_explicit:
        last = key.nulls_largest != descending
        sql += " NULLS LAST" if last else " NULLS FIRST"
    return sql


@dataclass(frozen=True)
class PageLinks:
    """The query strings of the pages around a page, "" where there is none: the first page
    is offered once the previous one is not already it."""

    first: str
    previous: str
    next: str

    def __bool__(self) -> bool:
        return bool(self.previous or self.next)


def page_links(page: KeysetPage, query: QueryDict, *, parameter: str = "cursor") -> PageLinks:
    """Links to the pages around `page` that keep the rest of the request's query (its
    filters, search and sort)."""
    kept = query.copy()
    kept.pop(parameter, None)

    def to(cursor: str | None) -> str:
        if cursor is None:
            return ""
        wanted = kept.copy()
        if cursor != FIRST_PAGE:
            wanted[parameter] = cursor
        return "?" + wanted.urlencode()

    first = to(FIRST_PAGE) if page.previous not in (None, FIRST_PAGE) else ""
    return PageLinks(first=first, previous=to(page.previous), next=to(page.next))


def count_up_to(queryset, cap: int) -> int:
    """How many rows the queryset has, counting no further than one past `cap`: a list that
    says "more than 1,000" never pays for counting a million."""
    return queryset.order_by().values("pk")[: cap + 1].count()
