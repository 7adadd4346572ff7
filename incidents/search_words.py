"""The words of an incident's search text, for the index that serves terms under 3 characters.

Trigram indexes (pg_trgm, SQLite FTS5 trigram) see nothing in a one- or two-character term:
"显存" or the "of" of "out of memory" made every search read every row. So the search text is
also kept as a list of words, indexed by a plain word index on both databases. Chinese (and
Japanese, Korean) is written without spaces, so a run of those characters gives each character
and each pair of neighbours as words: a term of one or two of them is then one exact word
("显存不足" gives 显 存 不 足 显存 存不 不足). Other letters and digits form ordinary words, which a
two-character term matches by their start ("of" finds "of" and "offload") and a one-character
term as a whole word ("3" finds "rank 3", not "300" and "3.5": a one-character start is shared
by a sixteenth of all words, which a search cannot narrow and the index would read whole).

Plain Python: the same words go into PostgreSQL's tsvector and SQLite's FTS5 table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

CJK = (
    "\u3040-\u30fa\u30fc-\u30ff"  # kana (not the middle dot, which is punctuation)
    "\u3100-\u312f"  # bopomofo
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003134f"  # CJK extensions B to G
)
# A run of CJK characters, or a run of other letters and digits (no underscore, which
# both databases' tokenizers treat as a separator).
_RUNS = re.compile(f"([{CJK}]+)|([^\\W_{CJK}]+)")


def search_words(text: str) -> str:
    """The distinct words of `text`, lowercased, separated by single spaces."""
    words: dict[str, None] = {}
    for cjk, other in _RUNS.findall(text.lower()):
        if other:
            words[other] = None
            continue
        for i, character in enumerate(cjk):
            words[character] = None
            if i + 1 < len(cjk):
                words[cjk[i : i + 2]] = None
    return " ".join(words)


@dataclass(frozen=True)
class WordQuery:
    """What a short term asks of the word index: every word in `exact`, and a word starting
    with each of `prefixes`. `complete` when that is all the term asks: otherwise the term's
    text (punctuation, or words that must be adjacent) still has to be checked."""

    exact: tuple[str, ...]
    prefixes: tuple[str, ...]
    complete: bool

    @property
    def empty(self) -> bool:
        return not (self.exact or self.prefixes)


def word_query(term: str) -> WordQuery:
    """The word-index query for a term shorter than 3 characters."""
    exact, prefixes = [], []
    for cjk, other in _RUNS.findall(term.lower()):
        if other:
            (exact if len(other) == 1 else prefixes).append(other)
        else:
            exact.append(cjk)  # one or two characters: a word of the index as it is
    runs = exact + prefixes
    return WordQuery(
        exact=tuple(exact),
        prefixes=tuple(prefixes),
        complete=len(runs) == 1 and runs[0] == term.lower(),
    )
