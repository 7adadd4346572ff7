"""The weekly report as stored: a versioned, typed, language-neutral snapshot.

Codes, numbers and titles in every language, so that one stored week reads in each user's
language. It is JSON in the database (`WeeklyReport.data`); these types say what the JSON
holds, section by section, for the code that writes it and the code that reads it.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

SNAPSHOT_VERSION = 1


class IncidentRef(TypedDict):
    slug: str
    titles: dict[str, str]  # language → title
    stage: str
    discipline: str


class NewIncident(IncidentRef):
    severity: str
    reporter: str
    created_at: str  # ISO 8601


class NewIncidents(TypedDict):
    count: int
    items: list[NewIncident]


class Analyses(TypedDict):
    submitted: int
    explained: int
    unexplained: int
    failed: int
    explained_share: float | None
    previous_share: float | None


class Recurrences(TypedDict):
    count: int
    incidents: int


class DimensionRow(TypedDict):
    """One stage or discipline: failures this week (new incidents + recurrences), last week."""

    key: str
    new: int
    recurred: int
    count: int
    previous: int
    change: int


class TrendWeek(TypedDict):
    week: str
    week_start: str
    stages: dict[str, int]
    submitted: int
    explained: int
    unexplained: int
    explained_share: float | None


class GapItem(TypedDict):
    key_template: str
    example_line: str
    stage: str
    tails: int
    gap_id: int | None
    open: bool


class Gaps(TypedDict):
    templates: int
    tails: int
    items: list[GapItem]


class RecurringItem(IncidentRef):
    count: int


class Flood(TypedDict):
    template: str
    example: str
    stage: str
    lines: int
    analyses: int


class StaleSignature(TypedDict):
    id: int
    pattern: str
    hit_count: int
    last_hit_at: str | None
    incident: IncidentRef


class StaleSignatures(TypedDict):
    count: int
    weeks: int
    items: list[StaleSignature]


class NotItItem(IncidentRef):
    count: int
    analyses: int


class NotIt(TypedDict):
    count: int
    items: list[NotItItem]


class Attention(TypedDict):
    discipline: str
    count: int
    change: int
    not_it: int


class Caught(TypedDict):
    """Failed jobs that `kb run` and `kb watch` sent on their own, by stage ("" unknown)."""

    count: int
    explained: int
    stages: dict[str, int]


class WeeklySnapshot(TypedDict):
    version: int
    week: str
    week_start: str
    week_end: str
    time_zone: str
    analyses: Analyses
    new_incidents: NewIncidents
    recurrences: Recurrences
    stages: list[DimensionRow]
    disciplines: list[DimensionRow]
    trend: list[TrendWeek]
    gaps: Gaps
    top_recurring: list[RecurringItem]
    floods: list[Flood]
    stale_signatures: StaleSignatures
    not_it: NotIt
    attention: Attention | None
    caught: NotRequired[Caught]  # absent from weeks built before it was counted
