"""The prefilter: the literals a pattern's every match contains, read from the pattern. It
may only ever widen what is tried: a line that a pattern matches always holds its atoms."""

from __future__ import annotations

import pytest
import re2
from hypothesis import given, settings
from hypothesis import strategies as st

from incidents.catalog import load_catalog
from incidents.logmatch.prefilter import required_atoms


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (r"No space left on device", ({"No space left on device"},)),
        (r"(?i)(?:CUDA|NPU) out of memory", ({" out of memory"}, {"CUDA", "NPU"})),
        (r"ab?cdef|xyz", ({"cdef", "xyz"},)),
        (r"foo(bar)?baz", ({"foo"}, {"baz"})),
        (r"(?:retry)+ after", ({" after"}, {"retry"})),
        (r"No space left(?i) on device", ({"No space left on device"},)),
        (r"exit(ed)? code \d+", ({" code "}, {"exit"})),
    ],
)
def test_it_reads_the_literals_every_match_holds(pattern, expected):
    assert required_atoms(pattern) == tuple(frozenset(atoms) for atoms in expected)


@pytest.mark.parametrize(
    "pattern",
    [
        r"[[:digit:]]+ errors",  # RE2's POSIX class, which Python reads as another class
        r"\pL+ failed",  # RE2 syntax Python does not know
        r"(?:a|b|cd)\d+",  # too short to filter anything
        r"x*(?:err)?",
    ],
)
def test_a_pattern_whose_atoms_cannot_be_told_has_none(pattern):
    assert required_atoms(pattern) == ()


def test_every_catalog_pattern_holds_its_atoms_in_its_own_examples():
    signatures = [signature for entry in load_catalog() for signature in entry.signatures]
    assert sum(bool(required_atoms(signature.pattern)) for signature in signatures) > 300
    for signature in signatures:
        for example in signature.examples:
            assert re2.search(signature.pattern, example)
            for atoms in required_atoms(signature.pattern):
                assert any(re2.search("(?i)" + re2.escape(atom), example) for atom in atoms)


PIECES = st.sampled_from(
    ["err", "ERR", "or", "rank", "0", "ab", "b", "Ab", " ", "-", "x", "é", "显存", "oom"]
)


@st.composite
def patterns_and_a_match(draw, depth: int = 0) -> tuple[str, str]:
    """A pattern built of literals, sequences, alternations, optional and repeated groups,
    case-insensitive groups, wildcards and classes, with a text that it matches."""
    if depth >= 3:
        piece = draw(PIECES)
        return re2.escape(piece), piece
    inner = patterns_and_a_match(depth + 1)
    shape = draw(st.sampled_from(["literal", "sequence", "either", "maybe", "repeat", "case"]))
    if shape == "literal":
        piece = draw(PIECES)
        return re2.escape(piece), piece
    if shape == "sequence":
        parts = draw(st.lists(inner, min_size=1, max_size=4))
        extra = draw(st.sampled_from(["", ".*", "[a-z]", r"\d*"]))
        witness = {"": "", ".*": "~", "[a-z]": "q", r"\d*": "7"}[extra]
        return extra.join(p for p, _ in parts), witness.join(t for _, t in parts)
    if shape == "either":
        branches = draw(st.lists(inner, min_size=2, max_size=3))
        chosen = draw(st.sampled_from(branches))[1]
        return "(?:" + "|".join(p for p, _ in branches) + ")", chosen
    pattern, text = draw(inner)
    if shape == "maybe":
        return f"(?:{pattern})?", draw(st.sampled_from(["", text]))
    if shape == "repeat":
        return f"(?:{pattern})+", text * draw(st.integers(1, 2))
    return f"(?i:{pattern})", text.swapcase()


@settings(max_examples=500, deadline=None)
@given(case=patterns_and_a_match(), before=PIECES, after=PIECES)
def test_a_line_a_pattern_matches_holds_one_atom_of_each_set(case, before, after):
    pattern, match = case
    line = f"{before}{match}{after}"
    assert re2.search(pattern, line)
    for atoms in required_atoms(pattern):
        assert any(re2.search("(?i)" + re2.escape(atom), line) for atom in atoms), atoms
