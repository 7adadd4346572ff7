"""Whatever is pasted, the engine answers with a report or a documented refusal."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from incidents.logmatch import InputError, analyze, redact, report_as_dict

# Secrets planted among the words: whatever surrounds them, none may survive redaction.
PASSWORD = "hunter2x"
GITHUB_TOKEN = "ghp_" + "a1" * 18
LOG_WORDS = st.sampled_from(
    [
        "ERROR",
        "WARNING",
        "INFO",
        "Traceback (most recent call last):",
        "RuntimeError: CUDA out of memory.",
        "No space left on device",
        "Retrying utterance",
        "Killed",
        "loss nan",
        "显存不足",
        f"password={PASSWORD}",
        GITHUB_TOKEN,
        "-----BEGIN RSA PRIVATE KEY-----",
        "\x1b[31m",
        "\r",
        "\n",
        "\t",
        "<*>",
        "0x7f3a",
        "(a+)+$",
        "",
    ]
)
LOGLIKE = st.lists(st.one_of(LOG_WORDS, st.text(max_size=40)), max_size=60).map(" ".join)
SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def _check(report) -> None:
    as_dict = report_as_dict(report)
    assert len(report.line_groups) == report.line_count
    assert all(0 <= group < len(report.groups) for group in report.line_groups)
    for suggestion in report.suggestions:
        assert 0.0 <= suggestion.score <= 1.0
        for evidence in suggestion.evidence:
            assert 1 <= evidence.line <= report.line_count
    assert sum(as_dict["levels"].values()) == report.line_count


@SETTINGS
@given(st.binary(max_size=4096))
def test_arbitrary_bytes_never_crash(small_index, data):
    try:
        report = analyze(data, small_index)
    except InputError:
        return
    _check(report)


@SETTINGS
@given(st.one_of(st.text(max_size=2000), LOGLIKE))
def test_arbitrary_text_never_crashes(small_index, text):
    try:
        report = analyze(text, small_index, feedback={("<*>", "gpu-oom"): 1.0})
    except InputError:
        return
    _check(report)


@SETTINGS
@given(LOGLIKE)
def test_redaction_keeps_the_lines_and_removes_every_planted_secret(text):
    redacted, count = redact(text)

    assert redacted.count("\n") == text.count("\n")
    planted = [secret for secret in (PASSWORD, GITHUB_TOKEN) if secret in text]
    assert [secret for secret in planted if secret in redacted] == []
    assert count >= min(1, len(planted))
    assert redacted == text or count > 0  # nothing changes without being counted
