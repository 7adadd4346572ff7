"""The vocabulary of `common.vocabulary` as model choices, with the labels people read."""

from typing import Any

from django.db import models
from django.utils.translation import gettext_lazy as _

from common.vocabulary import DISCIPLINES, LANGUAGES, STAGES

STAGE_LABELS = {"build": _("Build"), "data": _("Data"), "train": _("Train"), "serve": _("Serve")}
DISCIPLINE_LABELS = {
    "version-lock": _("Version lock"),
    "validate-first": _("Validate first"),
    "tiny-sample": _("Tiny-sample trial run"),
    "reconcile": _("Artifact reconciliation"),
}
LANGUAGE_LABELS = {"en": _("English"), "zh-hans": _("Simplified Chinese")}


def _choices(name: str, codes: tuple[str, ...], labels: dict) -> type[models.TextChoices]:
    """Choices made from the vocabulary's codes, so that the codes are written down once."""
    members = [(code.upper().replace("-", "_"), (code, labels[code])) for code in codes]
    choices: Any = models.TextChoices
    return choices(name, members)


Stage = _choices("Stage", STAGES, STAGE_LABELS)
Discipline = _choices("Discipline", DISCIPLINES, DISCIPLINE_LABELS)


class Severity(models.TextChoices):
    """How bad it was; only the web speaks of it, so it is written down here alone."""

    LOW = "low", _("Low")
    MEDIUM = "medium", _("Medium")
    HIGH = "high", _("High")
    CRITICAL = "critical", _("Critical")


LANGUAGE_CHOICES = [(code, LANGUAGE_LABELS[code]) for code in LANGUAGES]
