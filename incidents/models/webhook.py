"""Outgoing webhooks: the team's chat told when `kb run` or `kb watch` caught a failure."""

from django.conf import settings
from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class Webhook(models.Model):
    class Format(models.TextChoices):
        SLACK = "slack", _("Slack-compatible JSON (Slack, Mattermost, Rocket.Chat)")
        FEISHU = "feishu", _("Feishu / Lark bot")
        DINGTALK = "dingtalk", _("DingTalk robot")

    name = models.CharField(_("name"), max_length=100)
    url = models.URLField(_("URL"), max_length=500)
    format = models.CharField(_("format"), max_length=10, choices=Format, default=Format.SLACK)
    # Feishu and DingTalk bots may require signed messages; the bot's secret signs them.
    secret = models.CharField(_("signing secret"), max_length=200, blank=True)
    language = models.CharField(
        _("language"), max_length=10, choices=settings.LANGUAGES, default=settings.LANGUAGE_CODE
    )
    enabled = models.BooleanField(_("enabled"), default=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, editable=False
    )
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    # The last delivery: when, and what went wrong (empty when it was accepted).
    last_sent_at = models.DateTimeField(_("last sent"), null=True, blank=True, editable=False)
    last_error = models.TextField(_("last error"), blank=True, editable=False)

    class Meta:
        ordering = ["name", "id"]
        verbose_name = _("webhook")
        verbose_name_plural = _("webhooks")

    def __str__(self) -> str:
        return self.name
