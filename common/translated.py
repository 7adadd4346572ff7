"""Content shipped in every language the product speaks, and kept in step with its catalog.

Incidents and runbooks both are written in one language and carry the same text in the
others (`translations`); both remember the digest of the catalog entry they were last seeded
from, which a person's edit empties, so that reseeding follows the catalog only where nobody
has changed anything.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from enum import Enum
from typing import Any

from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class TranslatedContent(models.Model):
    """A model whose `TEXT_FIELDS` exist in each language, as written or as translated."""

    TEXT_FIELDS: tuple[str, ...] = ()

    # The language the text columns are written in, and the same columns in other languages
    # ({"zh-hans": {"title": …, …}}) for content shipped with the product.
    language = models.CharField(_("language"), max_length=10, choices=settings.LANGUAGES)
    translations = models.JSONField(default=dict, blank=True, editable=False)
    # Digest of the catalog entry this was last seeded with; "" once a person edits it.
    catalog_digest = models.CharField(max_length=64, blank=True, editable=False)

    class Meta:
        abstract = True

    def text_in(self, language: str) -> tuple[dict[str, Any], str, bool]:
        """The text columns in `language` when a translation exists, else as written: the
        columns, the language they are in, and whether they are a translation."""
        other = self.translation_in(language)
        if other:
            return other, language, True
        return {name: getattr(self, name) for name in self.TEXT_FIELDS}, self.language, False

    def translation_in(self, language: str) -> dict[str, Any] | None:
        """The text columns shipped in `language`, when it is not the one they are written in."""
        return self.translations.get(language) if language != self.language else None

    def mark_edited(self, *, text_changed: bool) -> None:
        """A person changed this: reseeding must leave it alone, and translations of text
        that changed no longer say the same thing (the history keeps them). Not saved here."""
        self.catalog_digest = ""
        if text_changed:
            self.translations = {}


def catalog_digest(entry: Any, language: str) -> str:
    """What a catalog entry (a dataclass) seeded in `language` says, as a digest."""
    payload = json.dumps([asdict(entry), language], sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


class Seeding(Enum):
    CREATE = "create"
    UPDATE = "update"  # untouched since the last seed, and the catalog changed
    UNCHANGED = "unchanged"
    KEEP_EDITED = "keep-edited"  # a person edited it: their version stands


def seeding_for(stored: TranslatedContent | None, digest: str) -> Seeding:
    """What reseeding does to `stored` (None: not there yet) for a catalog entry of `digest`."""
    if stored is None:
        return Seeding.CREATE
    if stored.catalog_digest == digest:
        return Seeding.UNCHANGED
    return Seeding.UPDATE if stored.catalog_digest else Seeding.KEEP_EDITED


@dataclass
class SeedResult:
    created: int = 0
    updated: int = 0
    unchanged: int = 0
    kept_edited: list[str] = field(default_factory=list)

    def count(self, seeding: Seeding, slug: str) -> None:
        if seeding is Seeding.KEEP_EDITED:
            self.kept_edited.append(slug)
        else:
            name = {Seeding.CREATE: "created", Seeding.UPDATE: "updated"}.get(seeding, "unchanged")
            setattr(self, name, getattr(self, name) + 1)
