"""Pages of the API's lists, followed by cursor: a deep page costs what the first one does.

A cursor holds the values, in the list's whole order, of the row a page ended on; the next page
is the rows after it, found through the index of that order rather than by counting past every
row before it (OFFSET), and no page counts the whole list. The order is the list's own (a
sort, a search's relevance, the model's default) with the id added last, so it is unique and
no row is skipped or repeated between pages.
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
from django.utils.translation import gettext as _
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.utils.urls import remove_query_param, replace_query_param

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


class Pagination(CursorPagination):
    """Pages of 50; `page_size` from 1 to 200, and any other value is refused, not replaced by
    the default (a client asking for 500 rows was quietly sent 200). `next` and `previous`
    are the links to follow; a `page` number is refused, since a client that sent one would
    otherwise be given the first page again and again."""

    page_size_query_param = "page_size"
    max_page_size = 200
    ordering = "-pk"  # for the schema; a list's order is its queryset's own

    def paginate_queryset(self, queryset, request, view=None):
        if "page" in request.query_params:
            raise ValidationError({"page": [_("Pages follow the next link, not a number.")]})
        self.request = request
        self.page_size = self.get_page_size(request)
        self.base_url = request.build_absolute_uri()
        self.keys, annotations = order_keys(queryset)
        position, reverse = self._decode(request)
        queryset = queryset.annotate(**annotations)
        if position is not None:
            queryset = queryset.filter(keyset_after(self.keys, position, reverse))
        ordered = queryset.order_by(*(key.order(reverse) for key in self.keys))
        rows = list(ordered[: self.page_size + 1])
        more = len(rows) > self.page_size
        rows = rows[: self.page_size]
        if reverse:
            rows.reverse()
        self.has_next = more if not reverse else True
        self.has_previous = more if reverse else position is not None
        self.rows = rows
        self.display_page_controls = self.has_next or self.has_previous
        return rows

    def get_next_link(self):
        if not self.has_next or not self.rows:
            return None
        return self._link(self.rows[-1], reverse=False)

    def get_previous_link(self):
        if not self.has_previous:
            return None
        if not self.rows:  # nothing after the position: the page before is all before it
            return remove_query_param(self.base_url, self.cursor_query_param)
        return self._link(self.rows[0], reverse=True)

    def _link(self, row, *, reverse: bool) -> str:
        values = [getattr(row, key.attribute) for key in self.keys]
        encoded = cursor_encode([key.name for key in self.keys], values, reverse=reverse)
        return replace_query_param(self.base_url, self.cursor_query_param, encoded)

    def _decode(self, request) -> tuple[list[Any] | None, bool]:
        encoded = request.query_params.get(self.cursor_query_param)
        if not encoded:  # an empty value asks for nothing, as the lists' filters do
            return None, False
        try:
            body = json.loads(urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)))
            names, values, reverse = body["k"], body["v"], bool(body["r"])
        except (ValueError, TypeError, KeyError, binascii.Error) as error:
            raise self._invalid() from error
        if names != [key.name for key in self.keys] or len(values) != len(self.keys):
            raise self._invalid()  # made for another order (a sort changed since)
        return values, reverse

    def _invalid(self) -> NotFound:
        """No such page (as DRF's own cursor pages answer): the request is well formed, the
        position it names is not one of this list's."""
        return NotFound(_("Not a cursor of this list: follow its next link."))

    def get_page_size(self, request):
        raw = request.query_params.get(self.page_size_query_param)
        if raw is None:
            return self.page_size
        if not raw.isascii() or not raw.isdigit() or not 1 <= int(raw) <= self.max_page_size:
            raise ValidationError(
                {
                    self.page_size_query_param: [
                        _("A whole number from 1 to %(max)s.") % {"max": self.max_page_size}
                    ]
                }
            )
        return int(raw)

    def get_schema_operation_parameters(self, view):
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            if parameter["name"] == self.page_size_query_param:
                parameter["schema"].update(minimum=1, maximum=self.max_page_size)
        return parameters
