"""The whole analysis: its JSON shape, refused input with clear messages, hostile input with
clear outcomes, and the fixture-driven cases in `cases/` (a `.log` tail and its
`.expected.json`; adding a case means adding those two files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from incidents.logmatch import (
    BinaryInput,
    EmptyInput,
    IncidentSpec,
    InputTooLarge,
    Limits,
    SignatureSpec,
    analyze,
    benign_lines,
    build_index,
    report_as_dict,
)

from .conftest import SMALL_INCIDENTS, SMALL_SIGNATURES

CASES = sorted((Path(__file__).parent / "cases").glob("*.log"))

TAIL = """\
[2024-05-01 12:00:01,001] [INFO] step=1200, loss=1.9213
[2024-05-01 12:00:02,001] [WARNING] Retrying utterance spk1-utt1 with beam 40
[2024-05-01 12:00:03,001] [WARNING] Retrying utterance spk1-utt2 with beam 40
Traceback (most recent call last):
  File "train.py", line 10, in <module>
RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 1; 79.15 GiB total capacity)
"""


def test_the_json_has_the_documented_shape(small_index):
    report = report_as_dict(analyze(TAIL, small_index, log_path="exp/tri3/log/train.1.log"))

    documented = {"stage", "levels", "groups", "line_groups", "suggestions"}
    extra = {"errors", "key_line", "key_template", "stage_reason", "redactions"}
    extra |= {"invalid_bytes", "cut_lines", "line_count", "confident"}
    assert documented | extra <= report.keys()
    assert set(report["levels"]) == {"INFO", "WARNING", "ERROR"}
    assert sum(report["levels"].values()) == len(report["line_groups"]) == 6
    for found in report["groups"]:
        assert {"template", "level", "count", "first_line", "last_line", "flood"} <= found.keys()
    top = report["suggestions"][0]
    assert {"slug", "title", "score", "confident", "evidence", "why"} <= top.keys()
    assert top["slug"] == "gpu-oom"
    assert top["evidence"][0] == {
        "line": 6,
        "text": TAIL.splitlines()[5],
        "signature": "1",
        "kind": "signature",
    }
    assert report["key_line"] == {"line": 6, "text": TAIL.splitlines()[5]}
    assert "<*>" in report["key_template"]
    json.dumps(report)


def test_without_an_index_it_only_groups():
    report = analyze(TAIL, None)

    assert report.suggestions == ()
    assert len(report.line_groups) == report.line_count == 6
    assert report.levels["ERROR"] >= 1


def test_it_refuses_empty_input():
    with pytest.raises(EmptyInput):
        analyze("  \n\n ", None)


def test_it_refuses_input_over_the_cap_and_names_the_limit():
    with pytest.raises(InputTooLarge) as refused:
        analyze(b"x" * 3000, None, limits=Limits(max_bytes=2048))

    assert "2,048 bytes" in str(refused.value)


def test_it_refuses_a_binary_file():
    with pytest.raises(BinaryInput):
        analyze(b"\x7fELF\x02\x01\x01" + bytes(range(256)) * 8, None)


def test_a_single_five_megabyte_line_is_refused_at_the_default_cap(small_index):
    with pytest.raises(InputTooLarge):
        analyze("A" * 5_000_000, small_index)


def test_a_single_five_megabyte_line_under_a_raised_cap_is_cut(small_index):
    line = "RuntimeError: CUDA out of memory " + "x" * 5_000_000

    report = analyze(line, small_index, limits=Limits(max_bytes=8_000_000))

    assert report.cut_lines == 1
    assert report.suggestions[0].slug == "gpu-oom"


def test_a_hundred_thousand_copies_of_one_warning_are_one_flood(small_index):
    log = "\n".join(["WARNING: Retrying utterance spk1-utt1 with beam 40"] * 100_000)

    report = analyze(log, small_index, limits=Limits(max_bytes=8_000_000))

    assert len(report.groups) == 1
    assert report.groups[0].count == 100_000
    assert report.groups[0].flood
    assert report.suggestions[0].slug == "align-retry-flood"
    assert "repeated 100000 times" in report.suggestions[0].why


def test_a_catastrophic_and_a_match_everything_signature_have_clear_outcomes():
    signatures = [
        *SMALL_SIGNATURES,
        SignatureSpec("catastrophic", "host-oom", r"(x+x+)+y"),
        SignatureSpec("everything", "host-oom", r".*"),
        SignatureSpec("any-text", "host-oom", r"\w"),
    ]
    index = build_index(SMALL_INCIDENTS, signatures)
    log = "\n".join(["x" * 4000] * 100 + ["OSError: [Errno 28] No space left on device"])

    report = analyze(log, index)

    assert "catastrophic" not in index.rejected  # RE2 runs it in linear time; `re` would hang
    assert "empty string" in index.rejected["everything"]
    assert "lines of healthy logs" in index.rejected["any-text"]
    assert report.suggestions[0].slug == "disk-full"


def test_an_incident_filed_a_moment_ago_matches_at_once():
    filed = IncidentSpec(
        slug="hccl-link-down",
        title="HCCL link down",
        stage="train",
        symptom="[ERROR] HCCL(1234,python):2024-11-30-12:00:01.123.456 [hccl_comm.cc:88] "
        "link 3 to device 5 is down, retry 2 of 3",
    )
    index = build_index([*SMALL_INCIDENTS, filed], SMALL_SIGNATURES)
    log = (
        "[ERROR] HCCL(9876,python):2025-01-02-03:04:05.678.901 [hccl_comm.cc:88] "
        "link 1 to device 7 is down, retry 3 of 3"
    )

    report = analyze(log, index)

    assert report.suggestions[0].slug == "hccl-link-down"
    assert report.suggestions[0].confident


def _expected(log: Path) -> dict:
    return json.loads(log.with_suffix(".expected.json").read_text(encoding="utf-8"))


def _case(log: Path):
    """A case; `"xfail": "<reason>"` in its expected file marks a known gap, and the reason
    names where it lies ("catalog gap: …", "ranking gap: …") and why."""
    reason = _expected(log).get("xfail")
    marks = [pytest.mark.xfail(reason=reason)] if reason else []
    return pytest.param(log, id=log.stem, marks=marks)


@pytest.mark.parametrize("log", [_case(log) for log in CASES])
def test_it_ranks_the_expected_incident_first(log, catalog_index):
    """The expected incident comes first and is confident (`"confident": false` in the
    expected file accepts a correct lead without confidence); for `none`, no suggestion is
    confident."""
    expected = _expected(log)

    report = analyze(log.read_bytes(), catalog_index, log_path=expected.get("log_path"))

    first, *rest = report.suggestions or [None]
    if rest and first.score < rest[0].score:  # only an answer outranks a higher lead
        assert first.confident, first.why
    if expected["slug"] == "none":
        assert not any(s.confident for s in report.suggestions), report.suggestions[0]
    else:
        assert report.suggestions, "no suggestion at all"
        assert report.suggestions[0].slug == expected["slug"], report.suggestions[0].why
        if expected.get("confident", True):
            assert report.suggestions[0].confident, report.suggestions[0].why


@pytest.mark.parametrize("size", [60, 400])
def test_healthy_logs_get_no_confident_suggestion(catalog_index, size):
    """Slices of the benign reference corpus: a few retried utterances or the loss scaler's
    first overflows in a healthy log are not an incident."""
    for line_block in _slices(benign_lines(), size):
        report = analyze("\n".join(line_block), catalog_index)

        assert not any(s.confident for s in report.suggestions), report.suggestions[0].why


def _slices(lines: list[str], size: int) -> list[list[str]]:
    return [lines[start : start + size] for start in range(0, len(lines), size)]
