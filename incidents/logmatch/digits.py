"""Digit keys: lines that differ only in their digits share one key, and are processed once.

A training tail repeats itself with other numbers ("step=41001 ... loss 2.31", then
"step=41002 ... loss 2.29"): nearly every line is distinct, yet the rule tables cannot tell
most of them apart. A *digit key* is the line with its ASCII digits rewritten by a table that
keeps exactly the distinctions the patterns make, so every pattern matches a key exactly where
it matches each line behind it (same rules, same spans). Classifying, masking or scanning the
distinct keys instead of the distinct lines gives the same answers for far fewer lines.

Two tables:

* ``ALL_DIGITS``: every digit becomes ``0``. Right for patterns that name no particular digit
  (only ``\\d``, ``[0-9]``-like classes that hold every digit, and counted repeats): the
  masking regexes and the stage rules.
* ``ZERO_OR_NOT``: ``0`` stays, ``1``-``9`` become ``1``. Right for patterns that also say
  ``0`` or ``[1-9]`` (``errors: 0``, ``exit code [1-9]``): the level rules.

Each module that uses a table has a test that its patterns make no other distinction; a
pattern that names another digit (``nnet3``) needs the table changed, or ``\\d``.
Digits outside ASCII are left alone. Keys keep line ends, lengths and every other character.
"""

from __future__ import annotations

from collections.abc import Sequence

ALL_DIGITS = bytes.maketrans(b"123456789", b"000000000")
ZERO_OR_NOT = bytes.maketrans(b"23456789", b"11111111")
_STR_TABLES = {
    ALL_DIGITS: str.maketrans("123456789", "000000000"),
    ZERO_OR_NOT: str.maketrans("23456789", "11111111"),
}


def key_text(lines: Sequence[str], table: bytes) -> str | None:
    """The keys of ``lines`` joined by newlines, or None if a line holds a newline itself."""
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1:
        return None
    if text.isascii():  # str.translate has a fast path for ASCII only
        return text.translate(_STR_TABLES[table])
    return text.encode("utf-8", "surrogatepass").translate(table).decode("utf-8", "surrogatepass")


def str_keys(lines: Sequence[str], table: bytes) -> list[str]:
    """One key per line (str)."""
    if not lines:
        return []
    text = key_text(lines, table)
    if text is None:
        mapping = _STR_TABLES[table]
        return [s.translate(mapping) for s in lines]
    return text.split("\n")


def byte_keys(lines: Sequence[str], table: bytes) -> list[bytes]:
    """One key per line, UTF-8 encoded (what RE2 reads; lone surrogates pass through)."""
    if not lines:
        return []
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1:
        return [s.encode("utf-8", "surrogatepass").translate(table) for s in lines]
    return text_byte_keys(text, table)


def text_byte_keys(text: str, table: bytes) -> list[bytes]:
    """One key per line of ``text`` (lines joined by newlines), UTF-8 encoded."""
    return text.encode("utf-8", "surrogatepass").translate(table).split(b"\n")
