"""Generated text that loops: a server that answers `is is is is …` or `iguiguigu…` logs no
error, the output itself is the evidence.

`repetition(lines)` finds the line where the same words (one to `MAX_UNIT_WORDS` of them)
follow each other at least `MIN_REPEATS` times, where one long run of letters is a short
syllable repeated over and over, or where a model's NaN output (`!!!!!!!!!!!!`) or
undecodable bytes (`����`) run on. Numbers, hex and the words of a tensor dump (`nan`, `inf`)
are not text: `[0, 0, 0, …]`, `ffff ffff …` and `tensor([nan, nan, …])` are no finding; nor
are lines drawn with symbols (progress bars, rules). Only the last `LINES_READ` lines are
read. Like a trend, the finding is a lead.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence

from common.phrases import Phrase, gettext_noop

from .trends import Trend

MIN_REPEATS = 6  # consecutive occurrences of the same words
MAX_UNIT_WORDS = 6
MIN_LOOPED_RUN = 24  # letters in one run made of a repeated syllable
MAX_SYLLABLE = 8
MAX_LINE = 4000  # characters of a line looked at
LINES_READ = 5000  # the last lines of a tail looked at
QUERY = "generated text repeats itself: the same words loop until max_tokens"
_WORD = re.compile(r"[^\W\d_]+(?:['’-][^\W\d_]+)*")
_EDGES = "\"'`“”‘’()[]{}<>.,;:!?*"
_HEX = re.compile(r"[0-9a-fA-F]{4,}")
_NOT_TEXT = frozenset(("nan", "inf", "none", "null", "nil", "true", "false"))
# What a model emits when its logits are NaN (token 0 of many vocabularies is "!") or its
# bytes do not decode: a long run of one such character is no log's own drawing.
_DEGENERATE = re.compile(r"([!！?？\ufffd])\1{11,}")  # twelve or more
_DEGENERATE_RUNS = tuple(character * 12 for character in "!！?？\ufffd")


def repetition(lines: Sequence[str]) -> Trend | None:
    """The last line whose text loops, or None."""
    for number in range(len(lines) - 1, max(0, len(lines) - LINES_READ) - 1, -1):
        found = _looping(lines[number][:MAX_LINE])
        if found is not None:
            unit, repeats = found
            seen = Phrase(
                gettext_noop("“%(unit)s” repeats %(repeats)s times in a row"),
                unit=unit[:40],
                repeats=str(repeats),
            )
            return Trend(line=number, query=QUERY, seen=seen)
    return None


def _looping(line: str) -> tuple[str, int] | None:
    """The unit that loops in `line` and how often, or None. Words are the line's
    whitespace-separated tokens without surrounding punctuation: `sm_37 sm_50` or
    `blk_-90… blk_-86…` are identifiers, not a word `sm` or `blk` repeated."""
    if any(run in line for run in _DEGENERATE_RUNS):
        degenerate = _DEGENERATE.search(line)
        if degenerate is not None:
            return degenerate.group(1), len(degenerate.group(0))
    tokens = line.split()
    for token in tokens:
        if len(token) >= MIN_LOOPED_RUN:
            word = token.strip(_EDGES)
            if len(word) >= MIN_LOOPED_RUN and _WORD.fullmatch(word):
                syllable = _syllable(word.lower())
                if syllable is not None:
                    return syllable, len(word) // len(syllable)
    # Each word of a unit repeated MIN_REPEATS times occurs as a bare word at least
    # MIN_REPEATS - 2 times, even where quotes or commas cling to the first and the last
    # occurrence: most lines end here.
    bare = [token for token in tokens if token.isalpha()]
    if len(bare) - len(set(bare)) < MIN_REPEATS - 3:
        return None
    if max(Counter(bare).values()) < MIN_REPEATS - 2:
        return None
    words = [token.strip(_EDGES) for token in tokens]
    words = [word if _WORD.fullmatch(word) else "" for word in words]
    text = [word.lower() for word in words]
    for size in range(1, MAX_UNIT_WORDS + 1):
        run = 0
        for index in range(size, len(text) + 1):
            if index < len(text) and text[index] == text[index - size]:
                run += 1
                continue
            start = index - run - size
            if run >= size * (MIN_REPEATS - 1) and _is_text(text[start : start + size]):
                return " ".join(words[start : start + size]), run // size + 1
            run = 0
    return None


def _syllable(word: str) -> str | None:
    """The short unit `word` repeats, if it is one repeated (`iguiguigu…` → `igu`)."""
    for size in range(1, MAX_SYLLABLE + 1):
        unit = word[:size]
        if (unit * (len(word) // size + 1))[: len(word)] == word:
            return unit if size > 1 and _is_text([unit]) else None
    return None


def _is_text(unit: Sequence[str]) -> bool:
    """Every word of `unit` is a word, and one is more than a letter and says something."""
    return all(unit) and any(
        len(word) >= 2 and word.lower() not in _NOT_TEXT and not _HEX.fullmatch(word)
        for word in unit
    )
