"""What `kb analyze` prints for an analysis."""

from __future__ import annotations

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


def test_a_tail_ending_in_a_summary_of_an_earlier_failure_asks_for_more_of_the_log():
    text = _render(
        _analysis(
            {
                "key_line": {"text": "RuntimeError: Engine process failed to start"},
                "cause_above": {"line": 6},
            }
        )
    )

    assert "no confident match. key line: RuntimeError: Engine process failed to start" in text
    assert "line 6 only reports that something before it failed" in text


def test_a_tail_that_says_why_gets_no_such_advice():
    text = _render(_analysis({"key_line": {"text": "frobnicator exploded"}}))

    assert "only reports" not in text


def test_a_tail_cut_inside_a_traceback_asks_for_the_lines_after_it():
    text = _render(
        _analysis(
            {
                "key_line": {"text": "torch.cuda.set_device(self.device)"},
                "cut_in_traceback": {"line": 5},
            }
        )
    )

    assert "the log stops inside a traceback at line 5" in text
