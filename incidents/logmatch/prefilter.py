"""Which of many patterns could match a line, without holding every pattern compiled.

A compiled RE2 pattern costs about 4 KB, so 50,000 signatures held compiled would cost each
web and worker process some 200 MB. Instead, each pattern is read once for its *atoms*:
literal strings of which every match must contain at least one (`(?i)CUDA out of memory|
OutOfMemoryError` needs "CUDA out of memory" or "OutOfMemoryError"). The atoms of every
pattern go into case-insensitive literal sets; a line that holds none of a pattern's atoms
cannot match it, and most lines hold none. Only the patterns whose atoms a line holds are
run, compiled on first use and kept in a bounded cache shared by every index this process
builds, so a rebuilt index reuses what the last one compiled. A pattern whose atoms cannot
be told (a class such as `[[:digit:]]` that Python's parser reads differently from RE2, or
a syntax it does not know) gets none and is always run: the reading may only ever widen
what is tried, never narrow it.
"""

from __future__ import annotations

import functools
import re
import re._constants as sre
import re._parser as sre_parse
from collections.abc import Sequence

import re2

from .patterns import SET_MAX_MEM, compile_error, re2_options

# Atoms shorter than this would be found in too many lines to filter anything.
MIN_ATOM = 3
# Atoms per literal set, and the budget of each: its DFA is built lazily as lines need it.
ATOMS_PER_SET = 4000
ATOM_SET_MAX_MEM = 64 << 20
COMPILED_CACHE = 8192  # patterns kept compiled per process, the most recently used
# RE2's flag groups change case, `.`, `^`/`$` or greed, never which literals are required;
# Python's parser refuses them after the start of a pattern, so they are dropped before
# reading. (Not inside a class, where `(?i)` would be four characters of the class.)
_FLAG_GROUP = re.compile(r"(?<!\\)\(\?[imsU]+(?:-[imsU]*)?\)")
_GROUP_IN_CLASS = re.compile(r"\[[^\]]*\(\?")
_POSIX_CLASS = "[:"

Atoms = frozenset[str]  # one of these literals is in every match
Requirement = tuple[Atoms, ...]  # and so is one of each of these sets


@functools.lru_cache(maxsize=200_000)
def required_atoms(pattern: str) -> Requirement:
    """Sets of literals such that every match of `pattern` contains one literal of each
    set, the most telling set first; empty when none of at least MIN_ATOM characters can be
    told."""
    if _POSIX_CLASS in pattern or _GROUP_IN_CLASS.search(pattern):
        return ()
    try:
        parsed = sre_parse.parse(_FLAG_GROUP.sub("", pattern))
    except (re.error, RecursionError, OverflowError, ValueError):
        return ()
    return tuple(sorted(dict.fromkeys(_required(parsed)), key=_quality, reverse=True))


def _required(items: Sequence[tuple]) -> list[Atoms]:
    """Each required part of a sequence adds its sets: a literal run, a group, a repeat of
    at least once, and an alternation whose every branch requires something (any branch's
    best set will do, so their union is required)."""
    found: list[Atoms] = []
    run: list[str] = []
    for op, value in [*items, (None, None)]:
        if op is sre.LITERAL:
            run.append(chr(value))
            continue
        if len(run) >= MIN_ATOM:
            found.append(frozenset(["".join(run)]))
        run = []
        if op is sre.SUBPATTERN:
            found += _required(value[3])
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT) and value[0] >= 1:
            found += _required(value[2])
        elif op is sre.BRANCH:
            branches = [_required(branch) for branch in value[1]]
            if all(branches):
                found.append(frozenset().union(*(max(sets, key=_quality) for sets in branches)))
    return found


def _quality(atoms: Atoms) -> tuple[int, int]:
    return min(len(atom) for atom in atoms), -len(atoms)


@functools.lru_cache(maxsize=200_000)
def pattern_problem(pattern: str) -> str | None:
    """Why RE2 cannot use `pattern` as a signature, or None: it must compile, and it must
    need some text to match (one that matches the empty string would fire on every line)."""
    try:
        regex = re2.compile(pattern, re2_options(SET_MAX_MEM))
    except (re2.error, TypeError, ValueError):
        return f"does not compile in RE2: {compile_error(pattern) or 'RE2 refused it'}"
    if regex.search("") is not None:
        return "matches the empty string, so it would fire on every line"
    return None


@functools.lru_cache(maxsize=COMPILED_CACHE)
def compiled(pattern: str) -> re2._Regexp:
    return re2.compile(pattern, re2_options(SET_MAX_MEM))


class AtomIndex:
    """The atoms of many patterns, in case-insensitive literal sets. Each pattern is listed
    under the atoms of its most telling set; the rest of its sets are checked after."""

    def __init__(self, requirements: Sequence[tuple[int, Requirement]]):
        numbers: dict[str, int] = {}
        for _, requirement in requirements:
            for atoms in requirement:
                for atom in atoms:
                    numbers.setdefault(atom, len(numbers))
        self.atoms = list(numbers)
        self.owners: list[list[tuple[int, tuple[frozenset[int], ...]]]] = [[] for _ in numbers]
        for pattern, (first, *others) in requirements:
            rest = tuple(frozenset(numbers[atom] for atom in atoms) for atoms in others)
            for atom in first:
                self.owners[numbers[atom]].append((pattern, rest))
        self.sets = [
            _literal_set(self.atoms[start : start + ATOMS_PER_SET])
            for start in range(0, len(self.atoms), ATOMS_PER_SET)
        ]

    def any_in(self, data: bytes) -> bool:
        return any(atom_set.Match(data) for atom_set in self.sets)

    def candidates(self, data: bytes) -> set[int]:
        """The numbers of the patterns whose every set has an atom in `data`."""
        present: set[int] = set()
        for number, atom_set in enumerate(self.sets):
            offset = number * ATOMS_PER_SET
            present.update(offset + index for index in atom_set.Match(data) or ())
        found: set[int] = set()
        for atom in present:
            for pattern, rest in self.owners[atom]:
                for atoms in rest:
                    if atoms.isdisjoint(present):
                        break
                else:
                    found.add(pattern)
        return found


def _literal_set(atoms: Sequence[str]) -> re2.Set:
    options = re2_options(ATOM_SET_MAX_MEM)
    options.case_sensitive = False
    atom_set = re2.Set.SearchSet(options)
    for atom in atoms:
        atom_set.Add(re2.escape(atom))
    atom_set.Compile()
    return atom_set
