"""ISO weeks in settings.TIME_ZONE: the calendar the weekly rhythm and the weekly report share."""

from __future__ import annotations

from datetime import date, datetime, time, timedelta

from django.utils import timezone


def week_monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def week_label(moment: datetime) -> str:
    """ "2026-W49" for the ISO week `moment` falls in, on the site's clock (not the user's)."""
    year, week, _ = timezone.localtime(moment, timezone.get_default_timezone()).isocalendar()
    return f"{year}-W{week:02d}"


def week_bounds(day: date) -> tuple[datetime, datetime]:
    """[Monday 00:00, next Monday 00:00) of the ISO week holding `day`, in settings.TIME_ZONE."""
    start = datetime.combine(week_monday(day), time.min, tzinfo=timezone.get_default_timezone())
    # Wall-clock arithmetic on an aware datetime: a DST change inside the week is handled.
    return start, start + timedelta(days=7)
