"""The benign reference corpus: lines from healthy training and serving logs.

A signature that fires on more than a sliver of these lines would flag healthy jobs, so
`check_signature` refuses it. The corpus lives in `benign/*.log` next to this module.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from pathlib import Path

import re2

from .patterns import SET_MAX_MEM, re2_options

BENIGN_DIR = Path(__file__).with_name("benign")
# Patterns a corpus remembers the answer for; beyond that it forgets and starts again.
_REMEMBERED = 4096


def benign_lines() -> tuple[str, ...]:
    """Every non-blank line of `benign/*.log`, in file order (read once, then cached: the
    same tuple every time)."""
    return _load(BENIGN_DIR)


def benign_corpus() -> LineCorpus:
    """The shipped corpus, shared by every check in this process."""
    return _corpus(BENIGN_DIR)


@functools.cache
def _corpus(folder: Path) -> LineCorpus:
    return LineCorpus(_load(folder))


@functools.cache
def _load(folder: Path) -> tuple[str, ...]:
    lines: list[str] = []
    for path in sorted(folder.glob("*.log")):
        text = path.read_text(encoding="utf-8", errors="replace")
        lines.extend(line.rstrip("\r") for line in text.split("\n") if line.strip())
    return tuple(lines)


class LineCorpus:
    """Lines that patterns are tried on, and which lines each pattern fires on.

    Any number of patterns are tried in one pass: they go into one RE2 set and each distinct
    line is matched once, so checking a whole catalog costs about what checking one does.
    Answers are remembered per pattern.
    """

    def __init__(self, lines: Sequence[str]):
        self.lines = tuple(lines)
        self._distinct = tuple(dict.fromkeys(self.lines))
        self._encoded = tuple(line.encode("utf-8", "surrogatepass") for line in self._distinct)
        self._fired: dict[str, tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self.lines)

    def fired(self, pattern: str) -> tuple[str, ...]:
        """The lines `pattern` fires on, in corpus order, repeats included (none if it does
        not compile)."""
        self.scan((pattern,))
        return self._fired.get(pattern, ())

    def scan(self, patterns: Iterable[str]) -> None:
        """Try every pattern not tried yet, all in one pass over the lines."""
        new = [pattern for pattern in dict.fromkeys(patterns) if pattern not in self._fired]
        if not new:
            return
        if len(self._fired) + len(new) > _REMEMBERED:
            self._fired.clear()
        pattern_set = re2.Set.SearchSet(re2_options(SET_MAX_MEM))
        added: list[str] = []
        for pattern in new:
            try:
                pattern_set.Add(pattern)
            except re2.error:
                self._fired[pattern] = ()
            else:
                added.append(pattern)
        if not added:
            return
        pattern_set.Compile()
        hits: dict[int, set[str]] = {index: set() for index in range(len(added))}
        for text, data in zip(self._distinct, self._encoded, strict=True):
            for index in pattern_set.Match(data) or ():
                hits[index].add(text)
        for index, pattern in enumerate(added):
            matched = hits[index]
            self._fired[pattern] = tuple(line for line in self.lines if line in matched)
