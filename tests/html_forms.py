"""A form on a page, as a browser would post it back untouched."""

from __future__ import annotations

import re
from html.parser import HTMLParser

ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


def as_posted(html: str, form_id: str | None = None) -> dict[str, str]:
    """The named fields of the page's form (the one with `form_id`, else every field on the
    page) with the values a browser would send: inputs, checked boxes, textareas, the
    selected option. As a browser does, a date input drops a value that is not ISO
    (2026-11-30), and a textarea drops the newline that opens its content."""
    form = _FormFields(form_id)
    form.feed(html)
    return form.data


class _FormFields(HTMLParser):
    def __init__(self, form_id: str | None):
        super().__init__()
        self._form_id = form_id
        self._inside = form_id is None
        self.data: dict[str, str] = {}
        self._textarea: str | None = None
        self._select: str | None = None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "form" and self._form_id is not None:
            self._inside = attrs.get("id") == self._form_id
        if not self._inside:
            return
        name = attrs.get("name")
        kind = attrs.get("type")
        if tag == "input" and name and kind == "date":
            value = attrs.get("value") or ""
            self.data[name] = value if ISO_DATE.fullmatch(value) else ""
        elif tag == "input" and name and kind not in ("submit", "checkbox", "file"):
            self.data[name] = attrs.get("value") or ""
        elif tag == "input" and name and attrs.get("type") == "checkbox" and "checked" in attrs:
            self.data[name] = "on"
        elif tag == "textarea" and name:
            self._textarea, self.data[name] = name, ""
        elif tag == "select" and name:
            self._select = name
        elif tag == "option" and self._select and "selected" in attrs:
            self.data[self._select] = attrs.get("value") or ""

    def handle_endtag(self, tag):
        if tag == "form" and self._form_id is not None:
            self._inside = False
        if tag == "textarea" and self._textarea:
            self.data[self._textarea] = self.data[self._textarea].removeprefix("\n")
        if tag == "textarea":
            self._textarea = None
        elif tag == "select":
            self._select = None

    def handle_data(self, data):
        if self._textarea:
            self.data[self._textarea] += data
