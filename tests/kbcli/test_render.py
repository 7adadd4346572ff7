"""What `kb analyze` prints for an analysis."""

from __future__ import annotations

import pytest

from kbcli.kb import _render


def _analysis(report: dict) -> dict:
    return {
        "status": "done",
        "stage": "serve",
        "confident": False,
        "suggestions": [],
        "report": report,
        "page": "https://kb.example.org/analyses/7/",
    }


@pytest.mark.parametrize(
    ("where", "said"),
    [
        ({"cause_above": {"line": 6}}, "line 6 only reports that something before it failed"),
        ({"cut_in_traceback": {"line": 5}}, "the log stops inside a traceback at line 5"),
    ],
    ids=["summary-of-an-earlier-failure", "cut-inside-a-traceback"],
)
def test_a_tail_that_does_not_hold_its_cause_says_where_to_look(where, said):
    key_line = {"text": "RuntimeError: Engine process failed to start"}
    text = _render(_analysis({"key_line": key_line, **where}))

    assert "no confident match. key line: RuntimeError: Engine process failed to start" in text
    assert said in text


def test_a_tail_that_says_why_gets_no_such_advice():
    text = _render(_analysis({"key_line": {"text": "frobnicator exploded"}}))

    assert "only reports" not in text
    assert "stops inside a traceback" not in text


def test_a_tail_without_an_error_line_prints_no_empty_key_line():
    text = _render(_analysis({"key_line": None}))

    assert "no confident match, and no error or warning line to quote" in text
    assert "key line:" not in text
