"""Log analyses, the suggestions they produced, people's feedback, and knowledge gaps."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from incidents.models.incident import Incident, Recurrence


class KnowledgeGap(models.Model):
    """Unexplained tails that share a key template: something the book does not know yet."""

    key_hash = models.CharField(max_length=64, unique=True)
    key_template = models.TextField(_("key template"))
    example_line = models.TextField(_("example line"))
    stage = models.CharField(_("stage"), max_length=10, blank=True)
    analysis_count = models.PositiveIntegerField(_("tails"), default=0)
    first_seen = models.DateTimeField(_("first seen"), default=timezone.now)
    last_seen = models.DateTimeField(_("last seen"), default=timezone.now, db_index=True)
    # Set when a later analysis of the same template is explained, or an incident is filed from it.
    incident = models.ForeignKey(
        Incident, on_delete=models.SET_NULL, null=True, blank=True, related_name="gaps"
    )
    explained_at = models.DateTimeField(_("explained"), null=True, blank=True)

    class Meta:
        ordering = ["-last_seen", "-id"]
        verbose_name = _("knowledge gap")
        verbose_name_plural = _("knowledge gaps")

    def __str__(self) -> str:
        return self.key_template[:80]


class Analysis(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", _("Queued")
        RUNNING = "running", _("Running")
        DONE = "done", _("Done")
        FAILED = "failed", _("Failed")

    class Source(models.TextChoices):
        WEB = "web", _("Browser")
        API = "api", _("API")
        CLI = "cli", _("Command line")
        KB_RUN = "kb-run", _("kb run (a failed command)")
        KB_WATCH = "kb-watch", _("kb watch (a failed log)")

    # Sent by `kb run` and `kb watch`: failures caught where they happened, not pasted.
    CAUGHT = (Source.KB_RUN, Source.KB_WATCH)

    status = models.CharField(_("status"), max_length=10, choices=Status, default=Status.QUEUED)
    source = models.CharField(_("source"), max_length=10, choices=Source, default=Source.WEB)
    submitted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        verbose_name=_("submitted by"),
        on_delete=models.SET_NULL,
        null=True,
        related_name="analyses",
    )
    # The sender's key for this tail (`kb` spools with one): sent again, it is stored once.
    client_key = models.CharField(max_length=64, blank=True)
    log_path = models.CharField(_("log path"), max_length=500, blank=True)
    # Where a caught failure happened (kb run / kb watch); empty for a pasted tail.
    command = models.TextField(_("command"), blank=True)
    exit_status = models.SmallIntegerField(_("exit status"), null=True, blank=True)
    host = models.CharField(_("host"), max_length=255, blank=True)
    cwd = models.CharField(_("working directory"), max_length=500, blank=True)
    job_id = models.CharField(_("job id"), max_length=64, blank=True)
    text = models.TextField(_("log tail"))  # already redacted
    size_bytes = models.PositiveBigIntegerField(default=0)  # as received
    # Of a longer log only the last lines within the cap are analysed; how many bytes that was.
    analysed_bytes = models.PositiveIntegerField(default=0)
    encoding = models.CharField(max_length=20, default="utf-8")
    invalid_bytes = models.PositiveIntegerField(default=0)  # replaced by U+FFFD
    cut_lines = models.PositiveIntegerField(default=0)  # cut to the line-length cap
    redactions = models.PositiveIntegerField(_("secrets redacted"), default=0)
    report = models.JSONField(null=True, blank=True)
    stage = models.CharField(_("stage"), max_length=10, blank=True)
    confident = models.BooleanField(_("explained"), default=False)
    top_incident = models.ForeignKey(
        Incident, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    key_template = models.TextField(blank=True)
    # The stored report found a warning flood (its "floods" are not empty).
    flooded = models.BooleanField(default=False, editable=False)
    gap = models.ForeignKey(
        KnowledgeGap, on_delete=models.SET_NULL, null=True, blank=True, related_name="analyses"
    )
    error = models.TextField(blank=True)
    # Each claim by a worker increments it; only the latest claimant may store its result.
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)
    # Last handed to the broker; empty when the broker could not take it.
    queued_at = models.DateTimeField(default=timezone.now, null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    # A claim is a lease: past this moment a worker that has not finished is taken for dead,
    # and the next delivery or the sweep takes the tail over.
    claim_expires_at = models.DateTimeField(null=True, blank=True)
    # The task (message) that holds the claim: when the same message comes back, the worker
    # that ran it died (a lost worker's task is redelivered), so it may take over at once.
    claim_task_id = models.CharField(max_length=64, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # Set when a change to the incident book changed what this analysis puts first.
    reranked_at = models.DateTimeField(null=True, blank=True)
    reranked_from = models.CharField(max_length=80, blank=True)  # the top slug before; "" none

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = _("analysis")
        verbose_name_plural = _("analyses")
        indexes = [
            models.Index(fields=["status", "created_at"]),
            # The matrix counts confident analyses per top incident in a window.
            models.Index(fields=["status", "created_at", "confident", "top_incident"]),
            # The weekly report counts a week's failed jobs that `kb run` and `kb watch` sent.
            models.Index(
                fields=["created_at", "stage", "confident"],
                condition=models.Q(source__in=["kb-run", "kb-watch"]),
                name="analysis_caught_week",
            ),
            # The weekly report reads the warning floods of a week from the few reports that
            # found one.
            models.Index(
                fields=["created_at"],
                condition=models.Q(flooded=True),
                name="analysis_flooded_by_week",
            ),
            # The weekly report groups a week's unexplained tails by their key line.
            models.Index(
                fields=["created_at"],
                condition=models.Q(status="done", confident=False) & ~models.Q(key_template=""),
                name="analysis_unexplained_week",
            ),
        ]
        constraints = [
            models.UniqueConstraint(
                fields=["submitted_by", "client_key"],
                condition=~models.Q(client_key=""),
                name="analysis_client_key_once",
            ),
        ]

    def __str__(self) -> str:
        return f"analysis {self.pk} ({self.status})"

    def get_absolute_url(self) -> str:
        return reverse("incidents:analysis-detail", kwargs={"pk": self.pk})

    @property
    def caught(self) -> bool:
        return self.source in self.CAUGHT

    @property
    def finished(self) -> bool:
        return self.status in (self.Status.DONE, self.Status.FAILED)


class AnalysisSuggestion(models.Model):
    analysis = models.ForeignKey(Analysis, on_delete=models.CASCADE, related_name="suggestions")
    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="+")
    rank = models.PositiveSmallIntegerField()
    score = models.FloatField()
    confident = models.BooleanField(default=False)
    evidence = models.JSONField(default=list)
    why = models.TextField(blank=True)

    class Meta:
        ordering = ["analysis_id", "rank"]
        constraints = [
            models.UniqueConstraint(fields=["analysis", "incident"], name="suggestion_once"),
        ]

    def __str__(self) -> str:
        return f"{self.rank}. {self.incident_id} ({self.score:.2f})"


class Feedback(models.Model):
    class Verdict(models.TextChoices):
        FIXED = "fixed", _("This fixed it")
        NOT_IT = "not-it", _("Not it")

    analysis = models.ForeignKey(Analysis, on_delete=models.CASCADE, related_name="feedback")
    incident = models.ForeignKey(Incident, on_delete=models.CASCADE, related_name="feedback")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE)
    verdict = models.CharField(max_length=10, choices=Verdict)
    key_template = models.TextField(blank=True)
    recurrence = models.ForeignKey(Recurrence, on_delete=models.SET_NULL, null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["analysis", "incident", "user"], name="feedback_once_per_user"
            ),
        ]
        # The weekly report counts a week's "not it" marks per incident.
        indexes = [
            models.Index(
                fields=["verdict", "created_at", "incident", "analysis"],
                name="feedback_verdict_week",
            )
        ]

    def __str__(self) -> str:
        return f"{self.verdict} on analysis {self.analysis_id}"


class KnowledgeChange(models.Model):
    """An incident whose knowledge changed (filed, edited, deleted, a signature of it saved):
    stored analyses that it may now explain, or no longer, are ranked again. Changes wait
    here until the re-ranking task takes them, so a burst of edits is one re-ranking."""

    slug = models.SlugField(max_length=80)
    token = models.CharField(max_length=32, default="")  # the knowledge token it wrote
    created_at = models.DateTimeField(default=timezone.now)
    taken_at = models.DateTimeField(null=True, blank=True, db_index=True)

    class Meta:
        ordering = ["id"]

    def __str__(self) -> str:
        return self.slug


class KnowledgeState(models.Model):
    """One row: a token that every change to the knowledge replaces, and one for people's
    feedback. A process that holds a compiled index for a token knows it is current; one
    that holds an older index brings it up to date with the changes after its own."""

    token = models.CharField(max_length=32, default="")
    feedback_token = models.CharField(max_length=32, default="")
    # The last KnowledgeChange behind `token`: a process that has applied the changes up to
    # it is current. A new token without a new change means a bulk write: read everything.
    last_change = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return self.token

    @classmethod
    def current(cls) -> KnowledgeState:
        return cls.objects.get_or_create(pk=1)[0]

    @classmethod
    def replace(cls, name: str) -> str:
        """A change: a new `token` (or `feedback_token`), which is returned."""
        token = uuid.uuid4().hex
        if not cls.objects.filter(pk=1).update(**{name: token}):
            cls.objects.get_or_create(pk=1, defaults={name: token})
        return token
