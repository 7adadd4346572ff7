"""Load the shipped runbooks into the database, idempotently.

Running it again changes nothing. A runbook a person has edited is never overwritten; an
untouched one follows the catalog when the catalog itself changes.
"""

from __future__ import annotations

from dataclasses import asdict

from django.db import transaction
from django.utils.translation import gettext_noop

from common.history import history_note
from common.translated import Seeding, SeedResult, catalog_digest, seeding_for
from runbooks.catalog import CatalogRunbook, load_runbooks
from runbooks.models import Runbook
from runbooks.services import steps_normalize


def runbook_catalog_seed(*, language: str) -> SeedResult:
    result = SeedResult()
    for position, entry in enumerate(load_runbooks(), start=1):
        with transaction.atomic():
            _seed_runbook(entry, language, position, result)
    return result


def _text(entry: CatalogRunbook, language: str) -> dict:
    text = entry.text(language)
    return {
        "title": text.title,
        "summary": text.summary,
        "steps": steps_normalize(asdict(step) for step in text.steps),
    }


def _fields(entry: CatalogRunbook, language: str, position: int) -> dict:
    language = language if language in entry.texts else "en"
    return {
        **_text(entry, language),
        "kind": entry.kind,
        "stage": entry.stage,
        "discipline": entry.discipline,
        "calculator": entry.calculator,
        "position": position,
        "language": language,
        "translations": {other: _text(entry, other) for other in entry.texts if other != language},
    }


def _seed_runbook(entry: CatalogRunbook, language: str, position: int, result: SeedResult) -> None:
    digest = catalog_digest(entry, language)
    runbook = Runbook.objects.filter(slug=entry.slug).first()
    if runbook is not None and runbook.position != position:
        # Where a runbook sits in the list is not content: follow the catalog, edited or not,
        # without a history entry.
        Runbook.objects.filter(pk=runbook.pk).update(position=position)
    seeding = seeding_for(runbook, digest)
    result.count(seeding, entry.slug)
    if seeding is Seeding.CREATE:
        runbook, reason = Runbook(slug=entry.slug), gettext_noop("created")
    elif seeding is Seeding.UPDATE:
        reason = gettext_noop("catalog update")
    else:
        return
    for name, value in _fields(entry, language, position).items():
        setattr(runbook, name, value)
    runbook.catalog_digest = digest
    runbook.full_clean()
    history_note(runbook, reason=reason)
    runbook.save()
