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
    signatures_updated: int = 0
    signatures_retired: int = 0
    signatures_kept_edited: list[str] = field(default_factory=list)
    signatures_refused: list[str] = field(default_factory=list)


def catalog_seed(*, language: str) -> SeedResult:
    """All or nothing: one transaction, hence one re-ranking of stored analyses afterwards."""
    result = SeedResult()
    with transaction.atomic():
        for entry in load_catalog():
            fresh = _seed_incident(entry, language, result)
            _seed_signatures(entry, result, fresh=fresh)
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
    """Create or follow the catalog entry; True when this run created the incident."""
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
    return False


SIGNATURE_CONTENT = ("pattern", "note", "examples")


def signature_digest(*, pattern: str, note: str, examples: str) -> str:
    """What the seed wrote into a signature (the migration that added the field keeps a copy)."""
    payload = json.dumps([pattern, note, examples], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def _seed_signatures(entry: CatalogIncident, result: SeedResult, *, fresh: bool) -> None:
    """Add the entry's new signatures, follow changed ones, retire dropped ones — except where a
    lead has edited or deleted one: that choice stands."""
    incident = Incident.objects.get(slug=entry.slug)
    prefix = f"{entry.slug}:"
    stored = {
        signature.catalog_key: signature
        for signature in Signature.objects.filter(catalog_key__startswith=prefix)
    }
    deleted = set() if fresh else _deleted_keys(prefix) - stored.keys()
    for shipped in entry.signatures:
        key = prefix + shipped.key
        data = {
            "pattern": shipped.pattern,
            "note": shipped.note,
            "examples": "\n".join(shipped.examples),
            "enabled": True,
        }
        if key in deleted:
            continue
        if key in stored:
            _follow_signature(stored.pop(key), data, result)
            continue
        try:
            services.signature_create(
                incident=incident, catalog_key=key, catalog_digest=_digest_of(data), **data
            )
        except ValidationError as error:
            result.signatures_refused.append(f"{key}: {'; '.join(error.messages)}")
        else:
            result.signatures_created += 1
    for signature in stored.values():  # no longer shipped
        if _as_seeded(signature) and signature.enabled:
            _follow_signature(signature, {"enabled": False}, result)


def _digest_of(data: dict) -> str:
    return signature_digest(pattern=data["pattern"], note=data["note"], examples=data["examples"])


def _as_seeded(signature: Signature) -> bool:
    """Still what the seed wrote: nobody has changed its content since (nor emptied the digest,
    as every edit in the product does)."""
    content = {name: getattr(signature, name) for name in SIGNATURE_CONTENT}
    return signature.catalog_digest == _digest_of(content)


def _follow_signature(signature: Signature, wanted: dict, result: SeedResult) -> None:
    """Bring a signature the seed wrote to what the catalog now says (`wanted`)."""
    if not _as_seeded(signature):
        result.signatures_kept_edited.append(signature.catalog_key)
        return
    if all(getattr(signature, name) == value for name, value in wanted.items()):
        return
    content = {name: wanted.get(name, getattr(signature, name)) for name in SIGNATURE_CONTENT}
    signature._change_reason = gettext_noop("catalog update")
    try:
        services.signature_update(
            signature=signature, data=wanted, actor=None, catalog_digest=_digest_of(content)
        )
    except ValidationError as error:
        result.signatures_refused.append(f"{signature.catalog_key}: {'; '.join(error.messages)}")
    else:
        if wanted["enabled"]:
            result.signatures_updated += 1
        else:
            result.signatures_retired += 1


def _deleted_keys(prefix: str) -> set[str]:
    return set(
        Signature.history.filter(catalog_key__startswith=prefix, history_type="-").values_list(
            "catalog_key", flat=True
        )
    )
