"""RE2 patterns as the engine uses them: compiled with its options, their problems in RE2's
words, counter-patterns, the pattern a symptom line stands for, and how much literal text a
pattern demands."""

from __future__ import annotations

import functools
import re

import re2

from .masking import mask_line

# A 10k-pattern set fails to compile at RE2's default 8 MiB (and at 16 MiB); the budget is an
# upper bound, not an allocation.
SET_MAX_MEM = 256 << 20
# Symptom lines with fewer literal characters than this are too vague to be a signature.
MIN_SYMPTOM_LITERAL = 12
_WILDCARD = "<*>"


def re2_options(max_mem: int = 8 << 20) -> re2.Options:
    options = re2.Options()
    options.max_mem = max_mem
    options.log_errors = False  # RE2 would print every parse error to stderr through absl
    return options


def compile_error(pattern: str) -> str | None:
    """RE2's reason why `pattern` does not compile, or None when it compiles."""
    try:
        re2.compile(pattern, re2_options())
    except re2.error as error:
        reason = error.args[0] if error.args else "invalid pattern"
        return reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)
    except (TypeError, ValueError) as error:
        return str(error)
    return None


@functools.lru_cache(maxsize=4096)
def counter_regex(pattern: str) -> re2._Regexp:
    """A counter-pattern compiled multi-line: run over a whole tail, `^`/`$` are a line's ends."""
    return re2.compile(f"(?m){pattern}", re2_options())


def symptom_pattern(line: str) -> str | None:
    """An RE2 pattern for a symptom line: its masked template with literals escaped.

    Each `<*>` becomes `.*`: matching is per line and lines are capped, so the wildcard is
    bounded by the line, and a counted repeat such as `.{0,80}` would make the compiled
    program some forty times larger. Runs of whitespace match any whitespace. None when the
    line has too little literal text to say anything.
    """
    template = mask_line(line).strip()
    parts = [part.strip() for part in template.split(_WILDCARD)]
    literal = "".join(parts)
    if len(re.sub(r"\W", "", literal)) < MIN_SYMPTOM_LITERAL:
        return None
    pieces = [_escape_literal(part) for part in parts if part]
    return ".*".join(pieces)


def _escape_literal(text: str) -> str:
    return r"\s+".join(re2.escape(word) for word in text.split())


_LITERAL_SKIP = re.compile(r"\\[pP]\{[^}]*\}|\\[pP][A-Za-z]|\\[dDwWsSbBAzZ]|\[(?:\\.|[^\]\\])*\]")
_COUNTED_REPEAT = re.compile(r"\{(\d+)(?:,\d*)?\}")
_GROUP_NAME = re.compile(r"\?P?<\w+>")


def literal_length(pattern: str) -> int:
    """The least number of literal characters any match of `pattern` must contain (roughly).

    Counts escaped and plain characters, takes the shortest branch of each alternation, and
    drops what a `?`, `*` or `{0,…}` makes optional. Classes and wildcards count nothing.
    """
    text = _LITERAL_SKIP.sub("\x00", pattern)
    length, _ = _sequence_length(text, 0)
    return length


def _sequence_length(text: str, position: int) -> tuple[int, int]:
    """Literal length of the alternation starting at `position`, up to its closing `)`."""
    branches: list[int] = []
    current = 0
    last_atom = 0
    while position < len(text):
        char = text[position]
        if char == ")":
            position += 1
            break
        if char == "|":
            branches.append(current)
            current = last_atom = 0
            position += 1
            continue
        if char == "(":
            position += 1
            named = _GROUP_NAME.match(text, position)
            if named:
                position = named.end()
            elif text.startswith("?", position):
                closing = text.find(")", position)
                colon = text.find(":", position)
                if closing != -1 and (colon == -1 or closing < colon):
                    position = closing + 1  # a flag group such as (?i): no content
                    continue
                position = colon + 1 if colon != -1 else position + 1
            last_atom, position = _sequence_length(text, position)
        elif char == "{" and (repeat := _COUNTED_REPEAT.match(text, position)):
            if repeat.group(1) == "0":
                current -= last_atom
            last_atom = 0
            position = repeat.end()
            continue
        elif char in "*?":
            current -= last_atom
            last_atom = 0
            position += 1
            continue
        elif char == "+" or char in ".^$\x00":
            last_atom = 0
            position += 1
            continue
        elif char == "\\" and position + 1 < len(text):
            last_atom = 0 if text[position + 1].isspace() else 1
            position += 2
        else:
            last_atom = 0 if char.isspace() else 1
            position += 1
        current += last_atom
    branches.append(current)
    return max(0, min(branches)), position
