"""Rollups: small counts kept up to date as incidents, recurrences, analyses and feedback are
written (incidents.services.rollups), so that the matrix and the weekly report read a few
hundred rows, never every analysis. `rebuild_rollups` recomputes them from scratch.

What "happened" counts is defined in reports.selectors.matrix: recurrences by their date,
plus confident finished analyses nobody gave feedback on for their top incident, by the day
(site time) they were submitted.
"""

from __future__ import annotations

from django.db import models

from incidents.models.incident import Incident, Tag


class IncidentDay(models.Model):
    """How often one incident happened on one day; a row only where something did."""

    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="+")
    day = models.DateField()
    recurrences = models.IntegerField(default=0)
    analyses = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["incident", "day"], name="incident_day_once"),
        ]
        # A window of days per incident (the matrix with a filter, a window's roll-over).
        indexes = [models.Index(fields=["day", "incident"], name="incident_day_by_day")]

    def __str__(self) -> str:
        return f"{self.incident_id} @ {self.day}: {self.recurrences}+{self.analyses}"


class CellDay(models.Model):
    """The same counts per stage × prevention discipline × day, and the incidents filed that
    day: the heat map and the weekly report's per-stage and per-discipline counts read at
    most 16 rows a day."""

    stage = models.CharField(max_length=10)
    discipline = models.CharField(max_length=20)
    day = models.DateField()
    recurrences = models.IntegerField(default=0)
    analyses = models.IntegerField(default=0)
    filed = models.IntegerField(default=0)  # incidents created that day (site time)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["day", "stage", "discipline"], name="cell_day_once"),
        ]

    def __str__(self) -> str:
        return f"{self.stage}/{self.discipline} @ {self.day}"


class AnalysisDay(models.Model):
    """Analyses submitted per day (site time), and how those stand now: the weekly report's
    trend. An analysis ranked again moves between explained and unexplained."""

    day = models.DateField(unique=True)
    submitted = models.IntegerField(default=0)
    explained = models.IntegerField(default=0)  # finished, confident
    unexplained = models.IntegerField(default=0)  # finished, not confident
    failed = models.IntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.day}: {self.submitted}"


class IncidentCell(models.Model):
    """How many incidents each stage × discipline cell holds (16 rows)."""

    stage = models.CharField(max_length=10)
    discipline = models.CharField(max_length=20)
    incidents = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["stage", "discipline"], name="incident_cell_once"),
        ]

    def __str__(self) -> str:
        return f"{self.stage}/{self.discipline}: {self.incidents}"


class TagCellDay(models.Model):
    """How often the incidents of one tag happened per stage × discipline × day: the heat map
    of the matrix filtered by a tag reads at most 16 rows a day."""

    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="+", db_index=False)
    stage = models.CharField(max_length=10)
    discipline = models.CharField(max_length=20)
    day = models.DateField()
    happened = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["tag", "day", "stage", "discipline"], name="tag_cell_day_once"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.tag_id}: {self.stage}/{self.discipline} @ {self.day}"


class TagCell(models.Model):
    """How many incidents of one tag each stage × discipline cell holds."""

    tag = models.ForeignKey(Tag, on_delete=models.CASCADE, related_name="+", db_index=False)
    stage = models.CharField(max_length=10)
    discipline = models.CharField(max_length=20)
    incidents = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tag", "stage", "discipline"], name="tag_cell_once"),
        ]

    def __str__(self) -> str:
        return f"{self.tag_id}: {self.stage}/{self.discipline}: {self.incidents}"


class WindowState(models.Model):
    """A window of the matrix (its length in weeks) and the last day it is counted up to.
    Writers hold it shared while they add to WindowTotal; rolling to a new day holds it
    exclusively (PostgreSQL row locks; SQLite writes one at a time anyway)."""

    weeks = models.PositiveSmallIntegerField(primary_key=True)
    as_of = models.DateField(null=True, blank=True)  # empty: not counted yet

    def __str__(self) -> str:
        return f"{self.weeks} weeks to {self.as_of}"


class WindowTotal(models.Model):
    """How often an incident happened in the window of `weeks` weeks ending `as_of` of its
    WindowState; only incidents that happened. Its stage and all-time recurrence count are
    copied here so that a stage's busiest few are read off one index."""

    weeks = models.PositiveSmallIntegerField()
    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="+")
    stage = models.CharField(max_length=10)
    recurrence_count = models.IntegerField(default=0)
    happened = models.IntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["weeks", "incident"], name="window_total_once"),
        ]
        indexes = [
            models.Index(
                fields=["weeks", "stage", "-happened", "-recurrence_count", "incident"],
                name="window_total_ranking",
            )
        ]

    def __str__(self) -> str:
        return f"{self.incident_id} in {self.weeks} weeks: {self.happened}"
