"""Whole numbers typed by people: ASCII digits only ("²" and "٣" are digits to str.isdigit,
but not to int())."""

from __future__ import annotations

import re

_WHOLE = re.compile(r"[0-9]{1,18}")


def whole_number(value: object) -> int | None:
    """`value` as a non-negative int, or None when it is not one."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value if value >= 0 else None
    text = str(value or "")
    return int(text) if _WHOLE.fullmatch(text) else None
