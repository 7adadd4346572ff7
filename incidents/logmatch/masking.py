"""Masking: the template of a log line, its variable tokens replaced by ``<*>``.

Anything containing a digit (numbers, hex, ids, versions, IPs, timestamps, block ids such as
``blk_-123``), sizes and durations with their unit (``2.00 GiB``, ``30 seconds``), absolute paths
and URLs, host names, long hex words, dates, the value of ``key=value`` pairs, and empty
placeholders (``()``, ``[]``, ``''``) become ``<*>``. Adjacent wildcards joined only by
punctuation collapse into one, so ``12:00:00,123`` or ``10.0.0.1:8080 (host)`` become a single
``<*>``. Tokens are ASCII runs; CJK characters are boundaries, so ``第3个文件`` masks to
``第<*>个文件`` without any whitespace assumption. Every pattern is bounded by one line
(none crosses a line end), so many lines are masked in one pass over their joined text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

WILDCARD = "<*>"

# Characters that make up one "word" for masking. Deliberately ASCII: CJK text and the
# delimiters ( : = , ; quotes brackets ) split tokens, so "onExtend:1514038554000" keeps
# its key and only the number is masked.
_TC = r"A-Za-z0-9_.\-/+@~%#*$\\"
_TOKEN_START = f"(?<![{_TC}])"
_TOKEN_END = f"(?![{_TC}])"
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)"
_WEEKDAY = r"(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_DATE = _MONTH + r"[a-z]*\.?[ \t]+\d{1,2}" + _TOKEN_END
_UNIT = (
    r"(?:[kKMGTPE]i?B|B|bytes?|ms|us|ns|s|secs?|seconds?|mins?|minutes?|h|hours?)"
    r"\.?" + _TOKEN_END
)
_GENERIC_TLD = r"(?:com|net|org|edu|gov|io|info|biz|local|internal)"
# Two-letter final labels that are file extensions, not country domains (x.py, a.so).
# (The label must be two letters anyway, so h5 and the like need no entry.)
_NOT_CCTLD = r"(?!(?:py|sh|so|cc|md|js|rs|go|pl|pm|ts|db|gz|xz|el|mk|in|pt)(?![A-Za-z]))"
_LABEL = r"[A-Za-z0-9\-]"

# All alternatives sit behind one token-start check, and each begins with a literal or a
# character class, so the regex engine rejects a branch on its first character; plain words
# (letters followed by a delimiter) skip the costly branches after one look-ahead. This is
# what keeps the single pass well above 100k lines/s. Order matters where two could match at
# the same place: a path before "a token with a digit", a size before a bare number, and the
# key=value rule last so that ``pid=1234)`` masks just the number.
_DATES_AND_HEX_WORDS = [
    r"[JFMASOND][a-z]{2}(?<=" + _MONTH + r")[a-z]*\.?[ \t]+\d{1,2}" + _TOKEN_END,  # Jul 24
    r"[MTWFS][a-z]{2}(?<=" + _WEEKDAY + r"),?[ \t]+" + _DATE,  # Sun Jul 24
    r"[a-fA-F]{8,}" + _TOKEN_END,  # hex word without digits: ffffffff
]
_PLAIN_WORD = r"(?![A-Za-z]+[\s,;)\]}'\"=(\[{<>|!?])"
_VARIABLE_TOKENS = [
    r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s\"'<>()\[\]{}]*",  # URL
    r"/[^\s\"'<>()\[\]{},;]+",  # absolute path
    r"[~.]\.?/[^\s\"'<>()\[\]{},;]+",  # ~/x ./x ../x
    r"\d+(?:\.\d+)?[ \t]?" + _UNIT,  # 2.00 GiB, 30 seconds
    r"[<>~]\d+(?:\.\d+)?[ \t]?" + _UNIT,  # <1 sec
    r"[0-9a-fA-F]{1,4}(?:::?[0-9a-fA-F]{1,4}){2,7}(?![:\w])[" + _TC + "]*+",  # IPv6, 12:00:00.5
    rf"{_LABEL}+\.(?:{_LABEL}+\.)*{_GENERIC_TLD}(?:\.{_LABEL}+)*\.?{_TOKEN_END}",  # x.com.br
    rf"{_LABEL}+(?:\.{_LABEL}+)+\.{_NOT_CCTLD}[a-z]{{2}}\.?{_TOKEN_END}",  # proxy.cuhk.edu.hk
    r"[" + _TC + r"](?:(?<=\d)|[A-Za-z_.\-/+@~%#*$\\]*+\d)[" + _TC + r"]*+",  # has a digit
    r"[<>~][A-Za-z_.\-/+@~%#*$\\]*+\d[" + _TC + r"]*+",  # <5, ~3ms
]
_EMPTY_VALUE = r"[(\[{'\"](?<!\S.)[)\]}'\"](?!\S)"  # a lone (), [], '' ...
_KEY_VALUE = r"(?<==)(?:\"[^\"\n]*\"|'[^'\n]*'|[^\s,;=()\[\]{}<>\"']+)"

_MASK = re.compile(
    _TOKEN_START
    + "(?:"
    + "|".join(
        [
            _EMPTY_VALUE,
            *_DATES_AND_HEX_WORDS,
            _PLAIN_WORD + "(?:" + "|".join(_VARIABLE_TOKENS) + ")",
            _KEY_VALUE,
        ]
    )
    + ")"
)
# Brackets around nothing but wildcards vanish, so "2034 bytes (1.98 KB) sent" and
# "785 bytes sent" share a template; then adjacent wildcards merge into one.
_UNWRAP = re.compile(r"[(\[{][ \t]*<\*>(?:[ \t.,:;/\\|'\"=+\-#@~_]*<\*>)*[ \t]*[)\]}]")
_COLLAPSE = re.compile(r"<\*>(?:[ \t.,:;/\\|()\[\]{}'\"=+\-#@~_]*<\*>)+")
_WRAPPED = ("(<*>)", "[<*>]", "{<*>}")
_SPACES = re.compile(r"  +")


def _clean(text: str) -> str:
    text = _MASK.sub(WILDCARD, text)
    text = _COLLAPSE.sub(WILDCARD, _UNWRAP.sub(WILDCARD, text))
    if any(w in text for w in _WRAPPED):  # nested brackets: "[(1, 2)]"
        text = _COLLAPSE.sub(WILDCARD, _UNWRAP.sub(WILDCARD, text))
    return _SPACES.sub(" ", text)


def mask_line(line: str) -> str:
    """The template of one line: variable tokens replaced by ``<*>`` (see module docstring)."""
    return _clean(line.replace("\n", " ").replace("\r", " ")).rstrip()


def mask_lines(lines: Sequence[str]) -> list[str]:
    """``mask_line`` for many lines at once, in one regex pass over the joined text."""
    if not lines:
        return []
    text = "\n".join(lines)
    if text.count("\n") != len(lines) - 1 or "\r" in text:
        text = "\n".join(s.replace("\n", " ").replace("\r", " ") for s in lines)
    masked = [m.rstrip() for m in _clean(text).split("\n")]
    if len(masked) != len(lines):  # defensive: no pattern may cross a line end
        return [mask_line(s) for s in lines]
    return masked


def collapse_wildcards(text: str) -> str:
    """Adjacent wildcards joined only by punctuation become one."""
    return _COLLAPSE.sub(WILDCARD, text)
