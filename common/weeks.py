"""ISO weeks on the site's clock: Monday 00:00 to the next Monday 00:00 in settings.TIME_ZONE.

The one calendar of the weekly report and the weekly rhythm (checklist runs). A week is named
by its Monday (a date) inside the code and by its ISO label ("2026-W48") in URLs, files,
e-mails and on checklist runs.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from django.utils import timezone

WEEK_RE = re.compile(r"([0-9]{4})-W([0-9]{2})")
# The weeks a report can be about: an incident book has no history before 2000, and a
# year-long trend must still fit in the calendar.
YEARS = range(2000, 2101)


def week_parse(value: str) -> date:
    """The Monday of an ISO week label; ValueError for "2026-W54", "2026-48", "0001-W13"…"""
    match = WEEK_RE.fullmatch(value.strip())
    if not match or int(match[1]) not in YEARS:
        raise ValueError(
            f"{value!r} is not an ISO week such as 2026-W48 (years {YEARS[0]} to {YEARS[-1]})."
        )
    return date.fromisocalendar(int(match[1]), int(match[2]), 1)


def week_label_of_date(day: date) -> str:
    """ "2026-W48" for the ISO week holding `day` (any day of it, usually its Monday)."""
    year, week, _ = day.isocalendar()
    return f"{year:04d}-W{week:02d}"


def week_label_of_moment(moment: datetime) -> str:
    """ "2026-W48" for the ISO week an aware `moment` falls in on the site's clock (not the
    user's): Sunday 23:59 in settings.TIME_ZONE still belongs to the week it ends."""
    return week_label_of_date(timezone.localdate(moment, timezone.get_default_timezone()))


def week_monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def week_bounds(day: date, weeks: int = 1) -> tuple[datetime, datetime]:
    """[Monday 00:00, Monday 00:00 `weeks` later) of the ISO week holding `day`, as aware
    datetimes in settings.TIME_ZONE."""
    monday = week_monday(day)
    return day_start(monday), day_start(monday + timedelta(weeks=weeks))


def day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.get_default_timezone())


def week_current() -> date:
    return week_monday(timezone.localdate(timezone=timezone.get_default_timezone()))


def week_last_completed() -> date:
    """The Monday of the most recent week that has ended: what Monday's report is about."""
    return week_current() - timedelta(weeks=1)
