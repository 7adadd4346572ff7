"""The API's lists page by cursor (common/keyset.py): `next` and `previous` are the links to
follow, and no page counts the whole list."""

from __future__ import annotations

from django.utils.translation import gettext as _
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import CursorPagination
from rest_framework.utils.urls import remove_query_param, replace_query_param

from common.keyset import FIRST_PAGE, CursorInvalid, KeysetPage, keyset_page


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
        cursor = request.query_params.get(self.cursor_query_param)
        try:
            self.page: KeysetPage = keyset_page(
                queryset,
                cursor=cursor,
                size=self.page_size,
                rare_filters=getattr(view, "rare_filters", False),
            )
        except CursorInvalid as error:
            raise self._invalid() from error
        self.display_page_controls = self.page.has_other_pages
        return self.page.rows

    def get_next_link(self):
        return self._link(self.page.next)

    def get_previous_link(self):
        return self._link(self.page.previous)

    def _link(self, cursor: str | None) -> str | None:
        if cursor is None:
            return None
        if cursor == FIRST_PAGE:
            return remove_query_param(self.base_url, self.cursor_query_param)
        return replace_query_param(self.base_url, self.cursor_query_param, cursor)

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
