"""Writes to the incident book. Every change goes through one of these functions."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import date
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext_noop

from common.history import history_note
from common.translation import phrase_text
from incidents import logmatch
from incidents.catalog import tag_list_text
from incidents.models import TEXT_FIELDS, Incident, KnowledgeGap, Recurrence, Signature, Tag
from incidents.models.incident import tag_names_clean
from incidents.search_words import search_words
from incidents.services.knowledge import knowledge_changed
from incidents.services.rollups import (
    Happened,
    rollups_add,
    rollups_incident_filed,
    rollups_incident_moved,
    rollups_incident_removed,
    rollups_recurrence,
)

INCIDENT_FIELDS = (
    *TEXT_FIELDS,
    "discipline",
    "stage",
    "severity",
    "occurred_on",
    "resolved_on",
)
# A slug made from a title that another filing takes at the same moment: try the next one.
SLUG_ATTEMPTS = 5


def incident_new_slug(title: str) -> str:
    """A slug made from the title that no incident has yet."""
    base = slugify(title)[:70].strip("-") or "incident"
    taken = set(Incident.objects.filter(slug__startswith=base).values_list("slug", flat=True))
    slug, n = base, 2
    while slug in taken:
        slug, n = f"{base}-{n}", n + 1
    return slug


def tags_from_names(names: Iterable[str]) -> list[Tag]:
    existing = {tag.name: tag for tag in Tag.objects.filter(name__in=names)}
    return [existing.get(name) or Tag.objects.create(name=name) for name in names]


def incident_index(*, incident: Incident) -> None:
    """Refresh what is read from the incident's tags and text: the tag names it stores (the
    list's tag filter) and the text the search reads (all languages, tags)."""
    tag_names = [tag.name for tag in incident.tags.all()]
    incident.tag_list = tag_list_text(tag_names)
    incident.search_document = incident.build_search_document(tag_names)
    incident.search_words = search_words(incident.search_document)
    Incident.objects.filter(pk=incident.pk).update(
        tag_list=incident.tag_list,
        search_document=incident.search_document,
        search_words=incident.search_words,
    )


def incidents_retagged(*, incident_ids: Iterable[int]) -> None:
    """Refresh these incidents after a tag itself changed under them (renamed or deleted in
    the admin)."""
    incidents = list(Incident.objects.filter(pk__in=list(incident_ids)).prefetch_related("tags"))
    for incident in incidents:
        incident_index(incident=incident)
    knowledge_changed(slugs=[incident.slug for incident in incidents])


def _incident_without_secrets(incident: Incident) -> None:
    for name in TEXT_FIELDS:
        setattr(incident, name, logmatch.without_secrets(getattr(incident, name)))
    incident.translations = {
        language: {
            name: logmatch.without_secrets(value) if isinstance(value, str) else value
            for name, value in texts.items()
        }
        if isinstance(texts, dict)
        else texts
        for language, texts in (incident.translations or {}).items()
    }


def incident_save_with_tags(incident: Incident, tags: Iterable[str] | None) -> None:
    """Validate and save, secrets redacted; one save, hence one history record, that includes
    the tag names."""
    names = tag_names_clean(tags) if tags is not None else None
    _incident_without_secrets(incident)
    if names is not None:
        incident.tag_list = tag_list_text(names)
    incident.full_clean()
    with transaction.atomic():
        was = Incident.objects.filter(pk=incident.pk).values_list("stage", "discipline").first()
        incident.save()
        incident_counted(incident, was=was)
    if names is not None:
        incident.tags.set(tags_from_names(names))
    incident_index(incident=incident)
    knowledge_changed(slugs=[incident.slug])


def incident_create(
    *,
    data: Mapping[str, Any],
    reporter,
    language: str,
    slug: str = "",
    tags: Iterable[str] = (),
    translations: Mapping[str, Mapping[str, str]] | None = None,
    catalog_digest: str = "",
    gap: KnowledgeGap | None = None,
) -> Incident:
    """File an incident; filed from a knowledge gap, the gap now points at it.

    Without a `slug` one is made from the title; when a filing at the same moment takes it
    (a double submit), the next free one is used. A `slug` that is taken is refused.
    """
    for _attempt in range(SLUG_ATTEMPTS):
        incident = Incident(
            slug=slug or incident_new_slug(str(data.get("title", ""))),
            reporter=reporter,
            language=language,
            translations=dict(translations or {}),
            catalog_digest=catalog_digest,
            **{name: data[name] for name in INCIDENT_FIELDS if name in data},
        )
        history_note(incident, reason=gettext_noop("created"))
        try:
            with transaction.atomic():
                incident_save_with_tags(incident, tags)
                if gap is not None:
                    KnowledgeGap.objects.filter(pk=gap.pk).update(incident=incident)
        except ValidationError as error:
            if slug or "slug" not in getattr(error, "error_dict", {}):
                raise
            continue  # a filing committed a moment ago took the slug made from the title
        except IntegrityError:
            if not Incident.objects.filter(slug=incident.slug).exists():
                raise
            if slug:
                raise _slug_taken() from None
            continue  # another filing took the slug made from the same title
        return incident
    raise _slug_taken()


def _slug_taken() -> ValidationError:
    return ValidationError(
        {"slug": Incident._meta.get_field("slug").error_messages["unique"]}, code="unique"
    )


@transaction.atomic
def incident_update(
    *, incident: Incident, data: Mapping[str, Any], tags: Iterable[str] | None = None, actor
) -> Incident:
    """Apply a person's edit to the stored incident (what `incident` holds in memory, which a
    form may already have changed, is not trusted). Edited text no longer matches its shipped
    translations or its catalog entry, so both are let go (the history keeps them)."""
    incident = Incident.objects.select_for_update().get(pk=incident.pk)
    text_changed = any(
        name in data and data[name] != getattr(incident, name) for name in TEXT_FIELDS
    )
    for name in INCIDENT_FIELDS:
        if name in data:
            setattr(incident, name, data[name])
    incident.mark_edited(text_changed=text_changed)
    history_note(incident, by=actor)
    incident_save_with_tags(incident, tags)
    return incident


def incident_counted(incident: Incident, *, was: tuple[str, str] | None) -> None:
    """After saving an incident whose stage and discipline were `was` (None: a new one)."""
    if was is None:
        rollups_incident_filed(incident)
    else:
        rollups_incident_moved(incident, stage=was[0], discipline=was[1])


def incident_delete(*, incident: Incident) -> None:
    slug = incident.slug
    with transaction.atomic():
        rollups_incident_removed(incident)
        incident.delete()
    knowledge_changed(slugs=[slug])


def incident_record_recurrence(
    *,
    incident: Incident,
    reported_by,
    occurred_on: date | None = None,
    note: str = "",
    analysis=None,
) -> Recurrence:
    with transaction.atomic():
        recurrence = Recurrence(
            incident=incident,
            reported_by=reported_by,
            occurred_on=occurred_on or timezone.localdate(),
            note=logmatch.without_secrets(note),
            analysis=analysis,
        )
        recurrence.full_clean()
        recurrence.save()
        Incident.objects.filter(pk=incident.pk).update(recurrence_count=F("recurrence_count") + 1)
        rollups_recurrence(recurrence)
    return recurrence


def recurrence_delete(*, recurrence: Recurrence) -> None:
    with transaction.atomic():
        recurrence.delete()
        Incident.objects.filter(pk=recurrence.incident_id, recurrence_count__gt=0).update(
            recurrence_count=F("recurrence_count") - 1
        )
        rollups_recurrence(recurrence, -1)


def recurrence_update(*, recurrence: Recurrence, was: tuple[int, date]) -> None:
    """After a recurrence was saved that belonged to incident `was[0]` on day `was[1]`."""
    if was == (recurrence.incident_id, recurrence.occurred_on):
        return
    with transaction.atomic():
        moved = Incident.objects.filter(pk__in=[was[0], recurrence.incident_id])
        if was[0] != recurrence.incident_id:
            moved.filter(pk=was[0], recurrence_count__gt=0).update(
                recurrence_count=F("recurrence_count") - 1
            )
            moved.filter(pk=recurrence.incident_id).update(
                recurrence_count=F("recurrence_count") + 1
            )
        rollups_add(
            [
                Happened(was[0], was[1], recurrences=-1),
                Happened(recurrence.incident_id, recurrence.occurred_on, recurrences=1),
            ],
            recount=True,
        )


def signature_problems(*, pattern: str, examples: str, unless: str = "") -> dict[str, list[str]]:
    """Why a signature may not be saved, by field: its expression (RE2 syntax, empty matches,
    its own examples, the benign reference corpus of healthy logs it must stay quiet on) and
    its counter-pattern. Empty when it may."""
    lines = Signature(examples=examples).example_lines
    found = {
        "pattern": logmatch.check_signature(
            pattern, examples=lines, benign=logmatch.benign_corpus()
        ),
        "unless": logmatch.check_counter(unless, examples=lines),
    }
    return {field: [phrase_text(p) for p in phrases] for field, phrases in found.items() if phrases}


def _signature_save(signature: Signature, actor, *, was_of: str = "") -> Signature:
    """Validate and save; `was_of` is the incident it belonged to before an edit moved it.

    The catalog key is not checked here: only the seed writes one, from a catalog whose
    loader refuses a repeated key, and the database's constraint stands behind it (checking
    a conditional constraint costs a query built from every field, on every save)."""
    signature.note = logmatch.without_secrets(signature.note)
    signature.examples = logmatch.without_secrets(signature.examples)
    signature.full_clean(exclude=["catalog_key"])
    problems = signature_problems(
        pattern=signature.pattern, examples=signature.examples, unless=signature.unless
    )
    if problems:
        raise ValidationError(problems)
    history_note(signature, by=actor)
    signature.save()
    knowledge_changed(slugs={signature.incident.slug, was_of} - {""})
    return signature


def signature_create(
    *,
    incident: Incident,
    pattern: str,
    note: str = "",
    examples: str = "",
    unless: str = "",
    lead_only: bool = False,
    enabled: bool = True,
    author=None,
    catalog_key: str = "",
    catalog_digest: str = "",
) -> Signature:
    signature = Signature(
        incident=incident,
        pattern=pattern,
        note=note,
        examples=examples,
        unless=unless,
        lead_only=lead_only,
        enabled=enabled,
        author=author,
        catalog_key=catalog_key,
        catalog_digest=catalog_digest,
    )
    return _signature_save(signature, author)


def signature_delete(*, signature: Signature) -> None:
    slug = signature.incident.slug
    signature.delete()
    knowledge_changed(slugs=[slug])


def signature_update(
    *, signature: Signature, data: Mapping[str, Any], actor, catalog_digest: str = ""
) -> Signature:
    """Change a signature. A person's change (no catalog digest) is never overwritten by
    reseeding; the seed itself passes the digest of the catalog entry it now follows."""
    was_of = Incident.objects.filter(pk=signature.incident_id).values_list("slug", flat=True)
    for name in ("incident", "pattern", "note", "examples", "unless", "lead_only", "enabled"):
        if name in data:
            setattr(signature, name, data[name])
    signature.catalog_digest = catalog_digest
    return _signature_save(signature, actor, was_of=was_of.first() or "")


def signature_mark_edited(*, signature: Signature) -> None:
    """A person changed this signature: reseeding must never overwrite it. Not saved here."""
    signature.catalog_digest = ""
