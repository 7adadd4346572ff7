"""Sentences the product says to people, translatable where they are made without Django:
the engine, the calculators and the signature checker all speak in phrases.

A `Phrase` is the English sentence itself (a `str`: the CLI, the JSON report and the tests
read it as one) that also remembers its message, with ``%(name)s`` placeholders, and the
values that filled them; a value may be a phrase of its own. The web layer says it again in
the reader's language from `Phrase.as_dict()`. Messages are marked with `gettext_noop`, the
name Django's ``makemessages`` collects into the translation catalog.
"""

from __future__ import annotations

from collections.abc import Mapping


def gettext_noop(message: str) -> str:
    """Mark `message` for the translation catalog; the engine itself speaks English."""
    return message


class Phrase(str):
    message: str
    params: dict[str, str]
    sentence: bool

    def __new__(cls, message: str, *, sentence: bool = False, **params: str) -> Phrase:
        text = message % {name: str(value) for name, value in params.items()} if params else message
        if sentence:
            text = text[:1].upper() + text[1:]
        phrase = super().__new__(cls, text)
        phrase.message, phrase.params, phrase.sentence = message, params, sentence
        return phrase

    @classmethod
    def of(cls, message: str, params: Mapping[str, str | Phrase]) -> Phrase:
        """The phrase of `message` with `params` given as a mapping."""
        return cls(message, **params)  # type: ignore[arg-type]  # no param is named sentence

    def as_dict(self) -> dict:
        """What a translator needs: the message, each value (nested phrases as dicts), and
        whether it opens a sentence (its first letter is then a capital)."""
        return {
            "message": self.message,
            "params": {
                name: value.as_dict() if isinstance(value, Phrase) else value
                for name, value in self.params.items()
            },
            "sentence": self.sentence,
        }


def phrase_dict(text: str) -> dict | str:
    """`text` as a translator needs it: a phrase's dict, or plain text as it is."""
    return text.as_dict() if isinstance(text, Phrase) else text
