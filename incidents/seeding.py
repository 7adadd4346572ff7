"""Load the starter knowledge base into the database, idempotently.

Running it again changes nothing. An incident a person has edited is never overwritten;
an untouched one follows the catalog when the catalog itself changes.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_noop

from common.history import history_note
from common.translated import Seeding, catalog_digest, seeding_for
from common.translated import SeedResult as ContentSeedResult
from incidents import logmatch, services
from incidents.catalog import CatalogIncident, load_catalog
from incidents.models import TEXT_FIELDS, Incident, Signature


@dataclass
class SeedResult(ContentSeedResult):
    signatures_created: int = 0
    signatures_updated: int = 0
    signatures_retired: int = 0
    signatures_kept_edited: list[str] = field(default_factory=list)
    signatures_refused: list[str] = field(default_factory=list)


def catalog_seed(*, language: str) -> SeedResult:
    """All or nothing: one transaction, hence one re-ranking of stored analyses afterwards."""
    result = SeedResult()
    catalog = load_catalog()
    # Every shipped pattern meets the healthy logs in one pass, not one pass each.
    logmatch.benign_corpus().scan(s.pattern for entry in catalog for s in entry.signatures)
    with transaction.atomic():
        stored = _shipped_signatures()
        deleted = _deleted_keys()
        for entry in catalog:
            incident, created = _seed_incident(entry, language, result)
            _seed_signatures(
                entry,
                incident,
                stored.get(entry.slug, {}),
                deleted=set() if created else deleted,
                result=result,
            )
    return result


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


def _seed_incident(
    entry: CatalogIncident, language: str, result: SeedResult
) -> tuple[Incident, bool]:
    """Create or follow the catalog entry; the incident, and whether this run created it."""
    digest = catalog_digest(entry, language)
    incident = Incident.objects.filter(slug=entry.slug).first()
    seeding = seeding_for(incident, digest)
    result.count(seeding, entry.slug)
    if incident is not None and seeding is not Seeding.UPDATE:
        return incident, False
    text_language, data, translations = _fields(entry, language)
    if incident is None:
        incident = services.incident_create(
            data=data,
            reporter=None,
            language=text_language,
            slug=entry.slug,
            tags=entry.tags,
            translations=translations,
            catalog_digest=digest,
        )
        return incident, True
    for name, value in data.items():
        setattr(incident, name, value)
    incident.language, incident.translations, incident.catalog_digest = (
        text_language,
        translations,
        digest,
    )
    history_note(incident, reason=gettext_noop("catalog update"))
    services.incident_save_with_tags(incident, entry.tags)
    return incident, False


SIGNATURE_TEXTS = ("pattern", "note", "examples", "unless")
SIGNATURE_CONTENT = (*SIGNATURE_TEXTS, "lead_only")


def signature_digest(content: Mapping[str, Any]) -> str:
    """What the seed wrote into a signature: a digest of its pattern, note, examples,
    counter-pattern and whether it is a lead only. Without a counter-pattern it is the digest
    signatures had before there were any (the migration that added the field keeps a copy),
    and a lead only adds a mark, so signatures seeded before either existed stay as seeded."""
    values = [content.get(name, "") for name in SIGNATURE_TEXTS]
    if not values[-1]:
        values.pop()
    if content.get("lead_only"):
        values.append("lead only")
    payload = json.dumps(values, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def _seed_signatures(
    entry: CatalogIncident,
    incident: Incident,
    stored: dict[str, Signature],
    *,
    deleted: set[str],
    result: SeedResult,
) -> None:
    """Add the entry's new signatures, follow changed ones, retire dropped ones — except where a
    lead has edited or deleted one: that choice stands. `stored` is consumed."""
    for shipped in entry.signatures:
        key = f"{entry.slug}:{shipped.key}"
        if key in deleted and key not in stored:
            continue
        content: dict[str, Any] = {
            "pattern": shipped.pattern,
            "note": shipped.note,
            "examples": "\n".join(shipped.examples),
            "unless": shipped.unless,
            "lead_only": shipped.lead_only,
        }
        if key in stored:
            _follow_signature(stored.pop(key), {**content, "enabled": True}, result)
            continue
        try:
            services.signature_create(
                incident=incident,
                catalog_key=key,
                catalog_digest=signature_digest(content),
                pattern=content["pattern"],
                note=content["note"],
                examples=content["examples"],
                unless=content["unless"],
                lead_only=content["lead_only"],
            )
        except ValidationError as error:
            result.signatures_refused.append(f"{key}: {'; '.join(error.messages)}")
        else:
            result.signatures_created += 1
    for signature in stored.values():  # no longer shipped
        if _as_seeded(signature) and signature.enabled:
            _follow_signature(signature, {"enabled": False}, result)


def _as_seeded(signature: Signature) -> bool:
    """Still what the seed wrote: nobody has changed its content since (nor emptied the digest,
    as every edit in the product does)."""
    return signature.catalog_digest == signature_digest(_content(signature))


def _content(signature: Signature) -> dict[str, Any]:
    return {name: getattr(signature, name) for name in SIGNATURE_CONTENT}


def _follow_signature(signature: Signature, wanted: dict, result: SeedResult) -> None:
    """Bring a signature the seed wrote to what the catalog now says (`wanted`)."""
    if not _as_seeded(signature):
        result.signatures_kept_edited.append(signature.catalog_key)
        return
    if all(getattr(signature, name) == value for name, value in wanted.items()):
        return
    history_note(signature, reason=gettext_noop("catalog update"))
    try:
        services.signature_update(
            signature=signature,
            data=wanted,
            actor=None,
            catalog_digest=signature_digest({**_content(signature), **wanted}),
        )
    except ValidationError as error:
        result.signatures_refused.append(f"{signature.catalog_key}: {'; '.join(error.messages)}")
    else:
        if wanted["enabled"]:
            result.signatures_updated += 1
        else:
            result.signatures_retired += 1


def _shipped_signatures() -> dict[str, dict[str, Signature]]:
    """Signatures shipped with the catalog, by incident slug, then by catalog key."""
    by_slug: dict[str, dict[str, Signature]] = defaultdict(dict)
    for signature in Signature.objects.exclude(catalog_key=""):
        by_slug[signature.catalog_key.partition(":")[0]][signature.catalog_key] = signature
    return by_slug


def _deleted_keys() -> set[str]:
    """Catalog keys of shipped signatures someone deleted (the history keeps the deletion)."""
    return set(
        Signature.history.filter(history_type="-")
        .exclude(catalog_key="")
        .values_list("catalog_key", flat=True)
    )
