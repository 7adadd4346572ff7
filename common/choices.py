"""The vocabulary of `common.vocabulary` as model choices, with the labels people read."""

from django.db import models
from django.utils.translation import gettext_lazy as _

from common.vocabulary import DISCIPLINES, LANGUAGES, SEVERITIES, STAGES

STAGE_LABELS = {"build": _("Build"), "data": _("Data"), "train": _("Train"), "serve": _("Serve")}
DISCIPLINE_LABELS = {
    "version-lock": _("Version lock"),
    "validate-first": _("Validate first"),
    "tiny-sample": _("Tiny-sample trial run"),
    "reconcile": _("Artifact reconciliation"),
}
SEVERITY_LABELS = {
    "low": _("Low"),
    "medium": _("Medium"),
    "high": _("High"),
    "critical": _("Critical"),
}
LANGUAGE_LABELS = {"en": _("English"), "zh-hans": _("Simplified Chinese")}


def _choices(name: str, codes: tuple[str, ...], labels: dict) -> type[models.TextChoices]:
    members = [(code.upper().replace("-", "_"), (code, labels[code])) for code in codes]
    return models.TextChoices(name, members)  # type: ignore[return-value]


Stage = _choices("Stage", STAGES, STAGE_LABELS)
Discipline = _choices("Discipline", DISCIPLINES, DISCIPLINE_LABELS)
Severity = _choices("Severity", SEVERITIES, SEVERITY_LABELS)
LANGUAGE_CHOICES = [(code, LANGUAGE_LABELS[code]) for code in LANGUAGES]
