"""Runbooks (ordered steps, in the site language plus translations) and checklist runs."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from common.choices import Discipline, Stage
from common.numbers import whole_number
from common.translated import TranslatedContent
from common.weeks import week_label_of_moment

# The text that exists in every language a runbook is shown in.
TEXT_FIELDS = ("title", "summary", "steps")
STEP_KEYS = ("text", "command", "expected")
STEP_LIMITS = {"text": 2000, "command": 4000, "expected": 2000}
MAX_STEPS = 60
RHYTHM_SLUG = "weekly-rhythm"


class Kind(models.TextChoices):
    DIAGNOSE = "diagnose", _("Diagnose by stage")
    CHECKLIST = "checklist", _("Checklist")
    TRIAL = "trial", _("Trial run")
    RHYTHM = "rhythm", _("Rhythm")
    GUIDE = "guide", _("Guide")


class Calculator(models.TextChoices):
    MEMORY_HEADROOM = "memory-headroom", _("Memory headroom per card")
    SCALING_EFFICIENCY = "scaling-efficiency", _("Scaling efficiency")


def validate_steps(value) -> None:
    """Steps are a list of {"text", "command", "expected"} strings; every step says something."""
    if not isinstance(value, list):
        raise ValidationError(_("Steps must be a list."), code="invalid")
    if not 1 <= len(value) <= MAX_STEPS:
        raise ValidationError(
            _("A runbook has between 1 and %(max)d steps.") % {"max": MAX_STEPS}, code="count"
        )
    for number, step in enumerate(value, start=1):
        if not isinstance(step, dict) or set(step) - set(STEP_KEYS):
            raise ValidationError(
                _("Step %(n)d: use only the keys text, command and expected.") % {"n": number},
                code="invalid",
            )
        if not all(isinstance(step.get(key, ""), str) for key in STEP_KEYS):
            raise ValidationError(_("Step %(n)d: every value is text.") % {"n": number})
        if not step.get("text", "").strip():
            raise ValidationError(_("Step %(n)d: describe what to do.") % {"n": number})
        for key, limit in STEP_LIMITS.items():
            if len(step.get(key, "")) > limit:
                raise ValidationError(
                    _("Step %(n)d: the %(key)s is longer than %(limit)d characters.")
                    % {"n": number, "key": key, "limit": limit}
                )


@dataclass(frozen=True)
class StepText:
    index: int  # 0-based: what a checklist run's ticks refer to
    text: str
    command: str
    expected: str

    @property
    def number(self) -> int:
        return self.index + 1

    @property
    def command_id(self) -> str:
        """The element id a copy button points at."""
        return f"step-{self.number}-command"


@dataclass(frozen=True)
class RunbookText:
    title: str
    summary: str
    steps: tuple[StepText, ...]
    language: str
    translated: bool


class Runbook(TranslatedContent):
    TEXT_FIELDS = TEXT_FIELDS

    slug = models.SlugField(_("slug"), max_length=80, unique=True)
    kind = models.CharField(_("kind"), max_length=20, choices=Kind)
    stage = models.CharField(_("stage"), max_length=10, choices=Stage, blank=True)
    discipline = models.CharField(_("discipline"), max_length=20, choices=Discipline, blank=True)
    calculator = models.CharField(_("calculator"), max_length=30, choices=Calculator, blank=True)
    title = models.CharField(_("title"), max_length=200)
    summary = models.TextField(_("summary"), max_length=4000, validators=[MaxLengthValidator(4000)])
    steps = models.JSONField(_("steps"), default=list, validators=[validate_steps])
    position = models.PositiveIntegerField(_("position"), default=0)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    history = HistoricalRecords(excluded_fields=["updated_at"])

    class Meta:
        ordering = ["position", "slug"]
        verbose_name = _("runbook")
        verbose_name_plural = _("runbooks")
        indexes = [
            models.Index(fields=["stage", "position"]),  # the incident page's links
            models.Index(fields=["discipline", "position"]),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("runbooks:runbook-detail", kwargs={"slug": self.slug})

    def text(self, language: str) -> RunbookText:
        """The title, summary and steps in `language` when a translation exists, else as written."""
        source, shown_in, translated = self.text_in(language)
        return RunbookText(
            title=source.get("title", ""),
            summary=source.get("summary", ""),
            steps=tuple(
                StepText(
                    index=index,
                    text=step.get("text", ""),
                    command=step.get("command", ""),
                    expected=step.get("expected", ""),
                )
                for index, step in enumerate(source.get("steps", ()))
            ),
            language=shown_in,
            translated=translated,
        )


class ChecklistRun(models.Model):
    """One pass through a runbook's steps by one person: what was ticked, noted, and when."""

    runbook = models.ForeignKey(
        Runbook, on_delete=models.PROTECT, related_name="runs", verbose_name=_("runbook")
    )
    started_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("started by"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="checklist_runs",
    )
    started_at = models.DateTimeField(_("started"), default=timezone.now)
    finished_at = models.DateTimeField(_("finished"), null=True, blank=True)
    # "2026-W49": the ISO week of started_at in settings.TIME_ZONE, kept for display and the API.
    iso_week = models.CharField(_("ISO week"), max_length=8, blank=True, editable=False)
    # How many steps the runbook had when the run started: later edits do not move the ticks.
    step_count = models.PositiveSmallIntegerField(_("steps"), editable=False)
    ticked = models.JSONField(_("ticked steps"), default=list, blank=True)  # 0-based indexes
    step_notes = models.JSONField(_("step notes"), default=dict, blank=True)  # {"3": "…"}
    note = models.TextField(
        _("note"), max_length=4000, blank=True, validators=[MaxLengthValidator(4000)]
    )

    class Meta:
        ordering = ["-started_at", "-id"]
        verbose_name = _("checklist run")
        verbose_name_plural = _("checklist runs")
        indexes = [
            models.Index(
                fields=["runbook", "-started_at"]
            ),  # rhythm_runs_for_week, the runbook page
            models.Index(fields=["-started_at", "-id"]),  # the runs list
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(finished_at__isnull=True)
                | models.Q(finished_at__gte=models.F("started_at")),
                name="checklist_run_finished_after_started",
            ),
            # One open run per person, runbook and week: checklist_run_start relies on it when
            # two starts race (a double click, two tabs).
            models.UniqueConstraint(
                fields=["runbook", "started_by", "iso_week"],
                condition=models.Q(finished_at__isnull=True),
                name="checklist_run_one_open_per_week",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.runbook.slug} @ {self.iso_week}"

    def save(self, *args, **kwargs):
        self.iso_week = week_label_of_moment(self.started_at)
        super().save(*args, **kwargs)

    def get_absolute_url(self) -> str:
        return reverse("runbooks:run-detail", kwargs={"pk": self.pk})

    def clean(self) -> None:
        if not isinstance(self.ticked, list) or not all(
            isinstance(i, int) and 0 <= i < self.step_count for i in self.ticked
        ):
            raise ValidationError({"ticked": _("Tick only steps this runbook has.")})
        if not isinstance(self.step_notes, dict) or not all(
            (number := whole_number(key)) is not None
            and number < self.step_count
            and isinstance(text, str)
            for key, text in self.step_notes.items()
        ):
            raise ValidationError({"step_notes": _("Notes belong to steps this runbook has.")})

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    @property
    def ticked_count(self) -> int:
        return len(self.ticked)
