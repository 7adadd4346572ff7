"""Phrases in the reader's language.

The engine, the calculators and the signature checker speak English and hand over each
sentence as a `common.phrases.Phrase` (stored in a report as its dict); here its message and
every nested phrase go through the translation catalog, and the values fill the translated
placeholders.
"""

from __future__ import annotations

from django.utils.translation import gettext

from common.phrases import Phrase


def phrase_text(value: Phrase | dict | str | None) -> str:
    """A phrase, a stored phrase (its dict) or plain text, said in the active language."""
    if isinstance(value, Phrase):
        value = value.as_dict()
    if not isinstance(value, dict):
        return str(value or "")
    message = gettext(value["message"])
    params = value.get("params") or {}
    text = (
        message % {name: phrase_text(part) for name, part in params.items()} if params else message
    )
    return text[:1].upper() + text[1:] if value.get("sentence") else text


def error_text(error: Exception) -> str:
    """The message of an error the engine raised for a person, in the active language."""
    return phrase_text(error.args[0]) if error.args else str(error)
