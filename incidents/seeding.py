"""Load the starter knowledge base into the database, idempotently.

Running it again changes nothing. An incident a person has edited is never overwritten;
an untouched one follows the catalog when the catalog itself changes.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_noop

from incidents import services
from incidents.catalog import CatalogIncident, load_catalog
from incidents.models import TEXT_FIELDS, Incident, Signature


@dataclass
class SeedResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    kept_edited: list[str] = field(default_factory=list)
    signatures_created: int = 0
    signatures_refused: list[str] = field(default_factory=list)


def catalog_seed(*, language: str) -> SeedResult:
    """All or nothing: one transaction, hence one re-ranking of stored analyses afterwards."""
    result = SeedResult()
    with transaction.atomic():
        for entry in load_catalog():
            if _seed_incident(entry, language, result):
                _seed_signatures(entry, result)
    return result


def _digest(entry: CatalogIncident, language: str) -> str:
    payload = json.dumps([asdict(entry), language], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def _fields(entry: CatalogIncident, language: str) -> tuple[str, dict, dict]:
    language = language if language in entry.texts else "en"
    text = asdict(entry.text(language))
    translations = {
        other: {name: value for name, value in asdict(body).items() if name in TEXT_FIELDS}
        for other, body in entry.texts.items()
        if other != language
    }
    data = {
        **{name: text[name] for name in TEXT_FIELDS},
        "stage": entry.stage,
        "discipline": entry.discipline,
        "severity": entry.severity,
    }
    return language, data, translations


def _seed_incident(entry: CatalogIncident, language: str, result: SeedResult) -> bool:
    """Create or follow the catalog entry; True when the incident now matches the catalog."""
    digest = _digest(entry, language)
    incident = Incident.objects.filter(slug=entry.slug).first()
    if incident is not None and incident.catalog_digest == digest:
        result.unchanged += 1
        return False
    if incident is not None and not incident.catalog_digest:
        result.kept_edited.append(entry.slug)
        return False
    text_language, data, translations = _fields(entry, language)
    if incident is None:
        services.incident_create(
            data=data,
            reporter=None,
            language=text_language,
            slug=entry.slug,
            tags=entry.tags,
            translations=translations,
            catalog_digest=digest,
        )
        result.created += 1
        return True
    for name, value in data.items():
        setattr(incident, name, value)
    incident.language, incident.translations, incident.catalog_digest = (
        text_language,
        translations,
        digest,
    )
    incident._change_reason = gettext_noop("catalog update")
    services.incident_save_with_tags(incident, entry.tags)
    result.updated += 1
    return True


def _seed_signatures(entry: CatalogIncident, result: SeedResult) -> None:
    incident = Incident.objects.get(slug=entry.slug)
    known = set(
        Signature.objects.filter(catalog_key__startswith=f"{entry.slug}:").values_list(
            "catalog_key", flat=True
        )
    )
    for signature in entry.signatures:
        key = f"{entry.slug}:{signature.key}"
        if key in known:
            continue  # a lead may have tuned or disabled it: never overwrite
        try:
            services.signature_create(
                incident=incident,
                pattern=signature.pattern,
                note=signature.note,
                examples="\n".join(signature.examples),
                catalog_key=key,
            )
        except ValidationError as error:
            result.signatures_refused.append(f"{key}: {'; '.join(error.messages)}")
        else:
            result.signatures_created += 1
