"""The incident book: incidents in four columns, their signatures and recurrences."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxLengthValidator, RegexValidator
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from simple_history.models import HistoricalRecords

from common.choices import Discipline, Severity, Stage
from common.translated import TranslatedContent
from incidents.catalog import tag_names_normalized
from incidents.querysets import TAG_SEPARATOR, IncidentQuerySet, SignatureQuerySet

# The text columns that exist in every language an incident is shown in.
TEXT_FIELDS = ("title", "symptom", "root_cause", "remedy", "prevention", "environment")
# What a person edits on the form, in its order; the detail page's history diffs the same.
EDITABLE_FIELDS = (
    "title",
    "symptom",
    "root_cause",
    "remedy",
    "discipline",
    "prevention",
    "stage",
    "severity",
    "environment",
    "occurred_on",
    "resolved_on",
)


@dataclass(frozen=True)
class IncidentText:
    title: str
    symptom: str
    root_cause: str
    remedy: str
    prevention: str
    environment: str
    language: str
    translated: bool


class Tag(models.Model):
    name = models.CharField(
        _("name"),
        max_length=40,
        unique=True,
        # an incident stores its tag names joined by commas
        validators=[
            RegexValidator(",", inverse_match=True, message=_("A tag name cannot hold a comma."))
        ],
    )

    class Meta:
        ordering = ["name"]
        verbose_name = _("tag")
        verbose_name_plural = _("tags")

    def __str__(self) -> str:
        return self.name


MAX_TAGS = 12
MAX_TAG_LENGTH = 40


def tag_names_clean(names: Iterable[str]) -> list[str]:
    """Tag names as an incident keeps them: trimmed, lower case, sorted, each once; at most
    MAX_TAGS of at most MAX_TAG_LENGTH characters, else a ValidationError on `tags`."""
    cleaned = tag_names_normalized(names)
    if len(cleaned) > MAX_TAGS:
        raise ValidationError({"tags": _("At most %(n)d tags.") % {"n": MAX_TAGS}})
    too_long = [name for name in cleaned if len(name) > MAX_TAG_LENGTH]
    if too_long:
        raise ValidationError(
            {
                "tags": _("Tags are at most %(n)d characters: %(tags)s")
                % {"n": MAX_TAG_LENGTH, "tags": ", ".join(too_long)}
            }
        )
    return cleaned


class Incident(TranslatedContent):
    TEXT_FIELDS = TEXT_FIELDS

    slug = models.SlugField(
        _("slug"),
        max_length=80,
        unique=True,
        error_messages={"unique": _("An incident with this slug already exists.")},
    )
    title = models.CharField(_("title"), max_length=200)
    symptom = models.TextField(_("symptom"), max_length=4000, validators=[MaxLengthValidator(4000)])
    root_cause = models.CharField(_("root cause"), max_length=500)
    remedy = models.TextField(_("remedy"), max_length=4000, validators=[MaxLengthValidator(4000)])
    discipline = models.CharField(_("prevention discipline"), max_length=20, choices=Discipline)
    prevention = models.TextField(
        _("prevention note"), max_length=2000, blank=True, validators=[MaxLengthValidator(2000)]
    )
    stage = models.CharField(_("stage"), max_length=10, choices=Stage)
    severity = models.CharField(
        _("severity"), max_length=10, choices=Severity, default=Severity.MEDIUM
    )
    environment = models.TextField(
        _("environment"), max_length=2000, blank=True, validators=[MaxLengthValidator(2000)]
    )
    tags = models.ManyToManyField(Tag, blank=True, related_name="incidents", verbose_name=_("tags"))
    # The tag names as one line, so that the edit history records tag changes with the rest.
    tag_list = models.CharField(_("tags"), max_length=600, blank=True)
    occurred_on = models.DateField(_("occurred on"), null=True, blank=True)
    resolved_on = models.DateField(_("resolved on"), null=True, blank=True)
    reporter = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("reporter"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="reported_incidents",
    )
    recurrence_count = models.PositiveIntegerField(_("recurrences"), default=0, editable=False)
    search_document = models.TextField(blank=True, editable=False)
    # The same text as words, for terms under 3 characters (incidents/search_words.py).
    search_words = models.TextField(blank=True, editable=False)
    created_at = models.DateTimeField(_("created"), default=timezone.now, editable=False)
    updated_at = models.DateTimeField(_("updated"), auto_now=True)

    history = HistoricalRecords(
        excluded_fields=["search_document", "search_words", "recurrence_count", "updated_at"]
    )
    objects = IncidentQuerySet.as_manager()

    class Meta:
        ordering = ["-updated_at", "-id"]
        verbose_name = _("incident")
        verbose_name_plural = _("incidents")
        indexes = [
            models.Index(fields=["stage", "-updated_at"]),
            models.Index(fields=["discipline", "-updated_at"]),
            models.Index(fields=["severity", "-updated_at"]),
            models.Index(fields=["-updated_at", "-id"]),
            models.Index(fields=["-occurred_on", "-id"]),
            models.Index(fields=["-recurrence_count", "-id"]),
            # The matrix fills a quiet stage with its most recurring incidents.
            models.Index(
                fields=["stage", "-recurrence_count", "id"], name="incident_stage_recurring"
            ),
            # The weekly report lists the incidents filed in its week, oldest first.
            models.Index(fields=["created_at", "id"], name="incident_created"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(resolved_on__isnull=True)
                | models.Q(occurred_on__isnull=True)
                | models.Q(resolved_on__gte=models.F("occurred_on")),
                name="incident_resolved_after_occurred",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    def get_absolute_url(self) -> str:
        return reverse("incidents:incident-detail", kwargs={"slug": self.slug})

    def clean(self) -> None:
        """The rules of an incident, whoever files or edits it (page, API, admin, seed)."""
        self.root_cause = self.root_cause.strip()
        errors = {}
        if "\n" in self.root_cause:
            errors["root_cause"] = _("Keep the root cause to one sentence on one line.")
        if self.occurred_on and self.resolved_on and self.resolved_on < self.occurred_on:
            errors["resolved_on"] = _("The resolved date cannot be before it occurred.")
        if errors:
            raise ValidationError(errors)

    def text(self, language: str) -> IncidentText:
        """The text columns in `language` when a translation exists, else as written."""
        source, shown_in, translated = self.text_in(language)
        return IncidentText(
            **{name: source.get(name, "") for name in TEXT_FIELDS},
            language=shown_in,
            translated=translated,
        )

    def title_in(self, language: str) -> str:
        """The title alone, as `text` gives it: what a list row reads (the other text columns
        may be deferred)."""
        other = self.translation_in(language)
        return other.get("title", "") if other else self.title

    @property
    def tag_names(self) -> list[str]:
        """The tag names, sorted, read off the names the incident stores with its row: a
        page shows an incident's tags without a query for them."""
        return [name for name in self.tag_list.split(TAG_SEPARATOR) if name]

    def build_search_document(self, tag_names: list[str]) -> str:
        parts = [self.slug, *(getattr(self, name) for name in TEXT_FIELDS), *tag_names]
        for text in self.translations.values():
            parts.extend(text.get(name, "") for name in TEXT_FIELDS)
        return "\n".join(part for part in parts if part).lower()


class Signature(models.Model):
    incident = models.ForeignKey(
        Incident, on_delete=models.CASCADE, related_name="signatures", verbose_name=_("incident")
    )
    pattern = models.CharField(_("expression (RE2)"), max_length=1000)
    note = models.CharField(_("note"), max_length=300, blank=True)
    examples = models.TextField(
        _("example lines"),
        max_length=8000,
        blank=True,
        validators=[MaxLengthValidator(8000)],
        help_text=_(
            "One log line per line; the expression must match at least one. The lines it "
            "matches also teach the fallback: a log line worded like them finds this incident "
            "as a lead even where the expression does not match."
        ),
    )
    unless = models.CharField(
        _("ruled out by (RE2)"),
        max_length=1000,
        blank=True,
        help_text=_(
            "Optional. Where any line of a tail matches this expression, the signature does "
            "not count (e.g. /dev/shm rules out a full disk)."
        ),
    )
    lead_only = models.BooleanField(
        _("a lead only"),
        default=False,
        help_text=_(
            "The line has several usual causes: a match ranks this incident but never makes "
            "it the answer (e.g. a bare shape error)."
        ),
    )
    enabled = models.BooleanField(_("enabled"), default=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("author"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="signatures",
    )
    # "<slug>:<key>" for signatures shipped with the product, so reseeding finds them again.
    catalog_key = models.CharField(max_length=120, blank=True, editable=False)
    # What reseeding last wrote; emptied by a person's edit, which reseeding then leaves alone.
    catalog_digest = models.CharField(max_length=64, blank=True, editable=False)
    hit_count = models.PositiveIntegerField(_("hits"), default=0, editable=False)
    last_hit_at = models.DateTimeField(_("last hit"), null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    history = HistoricalRecords(excluded_fields=["hit_count", "last_hit_at", "updated_at"])
    objects = SignatureQuerySet.as_manager()

    class Meta:
        ordering = ["incident_id", "id"]
        verbose_name = _("signature")
        verbose_name_plural = _("signatures")
        constraints = [
            models.UniqueConstraint(
                fields=["catalog_key"],
                condition=~models.Q(catalog_key=""),
                name="signature_unique_catalog_key",
            ),
        ]
        # The weekly report lists the enabled signatures that fired longest ago (or never)
        # off this index (on SQLite without NULLS FIRST, which it refuses in an index and
        # needs not: migration 0021 makes it per database).
        indexes = [
            models.Index(
                models.F("last_hit_at").asc(nulls_first=True),
                models.F("id"),
                models.F("created_at"),
                condition=models.Q(enabled=True),
                name="signature_stale",
            )
        ]

    def __str__(self) -> str:
        return self.pattern

    @property
    def example_lines(self) -> list[str]:
        return [line for line in self.examples.splitlines() if line.strip()]


class Recurrence(models.Model):
    incident = models.ForeignKey(
        Incident, on_delete=models.CASCADE, related_name="recurrences", verbose_name=_("incident")
    )
    occurred_on = models.DateField(_("date"), default=timezone.localdate)
    reported_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("reported by"),
        on_delete=models.SET_NULL,
        null=True,
        related_name="recurrences",
    )
    note = models.TextField(
        _("note"), max_length=2000, blank=True, validators=[MaxLengthValidator(2000)]
    )
    # The analysis whose "this fixed it" recorded it: a fact, worded in the reader's language.
    analysis = models.ForeignKey(
        "incidents.Analysis",
        verbose_name=_("confirmed by analysis"),
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)

    class Meta:
        ordering = ["-occurred_on", "-id"]
        verbose_name = _("recurrence")
        verbose_name_plural = _("recurrences")
        indexes = [
            # The matrix and weekly report count a window per incident.
            models.Index(fields=["occurred_on", "incident"]),
            # An incident's page lists its recurrences newest first, a page at a time.
            models.Index(
                fields=["incident", "-occurred_on", "-id"], name="recurrence_incident_newest"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.incident.slug} @ {self.occurred_on}"
