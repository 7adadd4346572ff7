"""The weekly report: one stored snapshot per ISO week, and the lead's review of it."""

from __future__ import annotations

from datetime import date, timedelta

from django.conf import settings
from django.core.validators import MaxLengthValidator
from django.db import models
from django.urls import reverse
from django.utils.translation import gettext_lazy as _

from common.weeks import week_label_of_date


class WeeklyReport(models.Model):
    # The Monday, in settings.TIME_ZONE: the natural key, so a rebuild replaces, never duplicates.
    week_start = models.DateField(_("week"), unique=True)
    # Language-neutral: codes, numbers and titles in every language; labels are added on display.
    data = models.JSONField(_("snapshot"), default=dict)
    built_at = models.DateTimeField(_("built"))
    build_ms = models.PositiveIntegerField(_("build time (ms)"), default=0)
    emailed_at = models.DateTimeField(_("e-mailed"), null=True, blank=True)
    reviewed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("reviewed by"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    reviewed_at = models.DateTimeField(_("reviewed"), null=True, blank=True)
    review_notes = models.TextField(
        _("review notes"), max_length=4000, blank=True, validators=[MaxLengthValidator(4000)]
    )

    class Meta:
        ordering = ["-week_start"]
        verbose_name = _("weekly report")
        verbose_name_plural = _("weekly reports")

    def __str__(self) -> str:
        return self.week

    def get_absolute_url(self) -> str:
        return reverse("reports:weekly-detail", kwargs={"week": self.week_start})

    @property
    def week(self) -> str:
        return week_label_of_date(self.week_start)

    @property
    def week_end(self) -> date:
        """The Sunday."""
        return self.week_start + timedelta(days=6)

    @property
    def reviewed(self) -> bool:
        return self.reviewed_at is not None
