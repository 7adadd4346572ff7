"""ISO weeks on the site's clock: labels, parsing and boundaries, shared by reports and runs."""

from datetime import UTC, date, datetime, timedelta

import pytest

from common.weeks import (
    week_bounds,
    week_label_of_date,
    week_label_of_moment,
    week_monday,
    week_parse,
)


def test_it_names_a_week_by_its_monday():
    assert week_parse("2026-W48") == date(2026, 11, 23)
    assert week_label_of_date(date(2026, 11, 23)) == "2026-W48"
    assert week_label_of_date(date(2026, 11, 29)) == "2026-W48"  # any day of the week
    assert week_label_of_date(date(2026, 12, 28)) == "2026-W53"  # 2026 has 53 ISO weeks
    assert week_parse("2027-W01") == date(2027, 1, 4)
    assert week_monday(date(2026, 11, 29)) == date(2026, 11, 23)  # a Sunday


@pytest.mark.parametrize("bad", ["2026-W54", "2025-W53", "2026-W00", "2026-48", "W48", "2026-W4"])
def test_it_refuses_what_is_not_an_iso_week(bad):
    with pytest.raises(ValueError):
        week_parse(bad)


def test_a_moment_belongs_to_the_week_of_the_sites_clock(settings):
    settings.TIME_ZONE = "Asia/Shanghai"  # UTC+8
    sunday_late = datetime(2026, 11, 29, 15, 59, tzinfo=UTC)  # Sun 23:59 in Shanghai
    monday_early = datetime(2026, 11, 29, 16, 0, tzinfo=UTC)  # Mon 00:00, still Sunday in UTC
    assert week_label_of_moment(sunday_late) == "2026-W48"
    assert week_label_of_moment(monday_early) == "2026-W49"


def test_a_week_runs_monday_to_monday_in_the_site_time_zone(settings):
    settings.TIME_ZONE = "Asia/Shanghai"
    start, end = week_bounds(date(2026, 11, 23))
    assert start.astimezone(UTC) == datetime(2026, 11, 22, 16, 0, tzinfo=UTC)
    assert end - start == timedelta(days=7)
    assert week_bounds(date(2026, 11, 26)) == (start, end)  # a Thursday: the same week


def test_a_week_with_a_daylight_saving_change_still_ends_at_local_midnight(settings):
    settings.TIME_ZONE = "Europe/Berlin"
    start, end = week_bounds(date(2026, 10, 19), weeks=2)  # clocks go back on 2026-10-25
    assert (start.hour, end.hour) == (0, 0)
    assert end.astimezone(UTC) - start.astimezone(UTC) == timedelta(days=14, hours=1)
