"""The lines an incident was seen with: its signatures' example lines are passages for the
similarity fallback, so a wording no expression knows can still find the incident as a lead."""

from __future__ import annotations

from dataclasses import replace

import pytest
from django.utils import translation

from common.translation import phrase_text
from incidents.logmatch import IncidentSpec, SignatureSpec, analyze, build_index, telling_examples
from incidents.logmatch.ranking import CORROBORATION, _combine

from .conftest import SMALL_INCIDENTS, SMALL_SIGNATURES
from .test_unseen_wordings import _clue

SPOOLER = IncidentSpec(
    slug="spooler-quota",
    title="Staging store refuses new data",
    stage="data",
    symptom="",
    description="The staging area for training data filled its allowance; raise the allowance.",
    examples=("shardspool: quota exceeded for bucket 7 (pending 4096 shards)",),
)
SPOOLER_SIGNATURE = SignatureSpec("spool-quota", "spooler-quota", r"shardspool: quota exceeded")
# The same failure in another release's words: the expression does not match it.
NEW_WORDING = (
    "step 1200 loss 2.31\n"
    "ERROR shardspool: bucket 3 is over quota, 4096 shards pending\n"
    "Traceback (most recent call last):\n"
    "RuntimeError: loader stopped\n"
)


def _index(*, examples: bool) -> object:
    spooler = SPOOLER if examples else replace(SPOOLER, examples=())
    return build_index([*SMALL_INCIDENTS, spooler], [*SMALL_SIGNATURES, SPOOLER_SIGNATURE])


def test_a_new_wording_of_an_example_line_finds_its_incident_as_a_lead():
    report = analyze(NEW_WORDING, _index(examples=True))

    first = report.suggestions[0]
    assert first.slug == "spooler-quota"
    assert first.evidence[0].kind == "similar"
    assert not report.confident  # a likeness ranks; only a signature or a person confirms
    with translation.override("en"):
        assert "line it was seen with before resembles ERROR line 2" in phrase_text(first.why)
    with translation.override("zh-hans"):
        assert "它以前出现过的一行日志与" in phrase_text(first.why)


def test_without_its_example_lines_the_incident_is_not_found_first():
    report = analyze(NEW_WORDING, _index(examples=False))

    assert [s.slug for s in report.suggestions[:1]] != ["spooler-quota"]


def test_the_example_line_itself_is_still_matched_by_its_signature():
    report = analyze(SPOOLER.examples[0], _index(examples=True))

    assert report.suggestions[0].evidence[0].signature == "spool-quota"


def test_a_description_is_compared_with_what_incidents_say_not_with_their_log_lines():
    index = _index(examples=True)
    with_examples = index.similarity.best_matches(["shardspool bucket over quota"])
    # as a description: the same words, with the example lines left out of the comparison
    without = index.similarity.best_matches(["shardspool bucket over quota"], without_examples=[0])

    assert with_examples[0].slug == "spooler-quota" and with_examples[0].example
    assert all(not hit.example for hit in without)


@pytest.mark.parametrize(
    ("pattern", "examples", "expected"),
    [
        # from where the expression matched: the log prefix any failure could have is left out
        (
            r"quota exceeded",
            ["2024-05-01 12:00:01 [pid 42] ERROR spool: quota exceeded (bucket 7)"],
            ("quota exceeded (bucket 7)",),
        ),
        # a context line pasted with the example, which the expression does not match, is left out
        (
            r"quota exceeded",
            ["Traceback (most recent call last):\nquota exceeded"],
            ("quota exceeded",),
        ),
        # an expression RE2 refuses gives nothing rather than an error
        (r"quota (exceeded", ["quota (exceeded"], ()),
    ],
)
def test_an_example_line_is_kept_from_where_its_expression_matched(pattern, examples, expected):
    assert telling_examples([(pattern, examples)]) == expected


def test_a_line_like_the_incidents_own_example_lines_is_no_further_proof():
    signature = _clue(3, "signature", 0.6)
    echo = replace(_clue(5, "similar", 0.4, similarity=0.5), echo=True)
    likeness = _clue(7, "similar", 0.4, similarity=0.5)

    assert _combine([signature, echo]) == pytest.approx(0.6)
    assert _combine([signature, echo, likeness]) == pytest.approx(0.6 + CORROBORATION * 0.4)
