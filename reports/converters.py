"""The `<isoweek:week>` path converter: "2026-W48" in the URL, the Monday (a date) in the view."""

from datetime import date

from django.urls import register_converter

from common.weeks import week_label_of_date, week_parse


class IsoWeekConverter:
    regex = r"[0-9]{4}-W[0-9]{2}"

    def to_python(self, value: str) -> date:
        return week_parse(value)  # ValueError (e.g. W54) makes the URL not match: a 404

    def to_url(self, value: date | str) -> str:
        return week_label_of_date(value) if isinstance(value, date) else value


# Registered here, once: both URL modules import this module.
register_converter(IsoWeekConverter, "isoweek")
