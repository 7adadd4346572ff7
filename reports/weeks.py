"""ISO weeks on the site's clock: Monday 00:00 to the next Monday 00:00 in settings.TIME_ZONE.

A week is named by its Monday (a date) inside the code and by its ISO label ("2026-W48") in
URLs, files and e-mails.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta

from django.utils import timezone

WEEK_RE = re.compile(r"(\d{4})-W(\d{2})")


def week_parse(value: str) -> date:
    """The Monday of an ISO week label; ValueError for "2026-W54", "2026-48", …"""
    match = WEEK_RE.fullmatch(value.strip())
    if not match:
        raise ValueError(f"{value!r} is not an ISO week such as 2026-W48.")
    return date.fromisocalendar(int(match[1]), int(match[2]), 1)


def week_label(week_start: date) -> str:
    year, week, _ = week_start.isocalendar()
    return f"{year}-W{week:02d}"


def week_monday(day: date) -> date:
    return day - timedelta(days=day.weekday())


def week_bounds(week_start: date, weeks: int = 1) -> tuple[datetime, datetime]:
    """[Monday 00:00, Monday 00:00 `weeks` later) as aware datetimes in settings.TIME_ZONE."""
    zone = timezone.get_default_timezone()
    start = datetime.combine(week_start, time.min, tzinfo=zone)
    end = datetime.combine(week_start + timedelta(weeks=weeks), time.min, tzinfo=zone)
    return start, end


def day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=timezone.get_default_timezone())


def week_current() -> date:
    return week_monday(timezone.localdate(timezone=timezone.get_default_timezone()))


def week_last_completed() -> date:
    """The Monday of the most recent week that has ended: what Monday's report is about."""
    return week_current() - timedelta(weeks=1)
