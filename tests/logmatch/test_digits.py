"""Digit keys: one key per line, digits rewritten, everything else kept."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from incidents.logmatch.digits import ALL_DIGITS, ZERO_OR_NOT, byte_keys, str_keys


def test_all_digits_become_zero():
    assert str_keys(["step 41001 loss 2.93", "第3个"], ALL_DIGITS) == [
        "step 00000 loss 0.00",
        "第0个",
    ]


def test_zero_stays_apart_from_the_other_digits():
    assert str_keys(["errors: 0", "errors: 10", "exit code 9"], ZERO_OR_NOT) == [
        "errors: 0",
        "errors: 10",
        "exit code 1",
    ]


def test_a_line_holding_a_newline_keeps_it():
    lines = ["a1\nb2", "c3"]
    assert str_keys(lines, ALL_DIGITS) == ["a0\nb0", "c0"]
    assert byte_keys(lines, ALL_DIGITS) == [b"a0\nb0", b"c0"]


def test_digits_outside_ascii_are_left_alone():
    assert str_keys(["٣ and ３ and 3"], ALL_DIGITS) == ["٣ and ３ and 0"]


def test_empty():
    assert str_keys([], ALL_DIGITS) == []
    assert byte_keys([], ZERO_OR_NOT) == []
    assert str_keys([""], ALL_DIGITS) == [""]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(max_size=30), max_size=20), st.sampled_from([ALL_DIGITS, ZERO_OR_NOT]))
def test_one_key_per_line_of_the_same_length(lines, table):
    keys = str_keys(lines, table)
    assert len(keys) == len(lines)
    assert [len(key) for key in keys] == [len(line) for line in lines]
    encoded = byte_keys(lines, table)
    assert encoded == [key.encode("utf-8", "surrogatepass") for key in keys]
