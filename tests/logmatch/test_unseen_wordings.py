"""A failure in a wording no signature knows yet still finds its incident among the leads: its
words resemble the incident's texts, however faintly. A faint resemblance is a lead for an empty
place in the ranking, never the answer, and never adds to another incident's evidence."""

from __future__ import annotations

from pathlib import Path

import pytest

from incidents.catalog import engine_specs
from incidents.logmatch import analyze, build_index
from incidents.logmatch.clues import SIMILARITY_FLOOR, Clue
from incidents.logmatch.ranking import CORROBORATION, _combine
from incidents.logmatch.types import Level

CASES = Path(__file__).with_name("cases")


@pytest.mark.parametrize(
    ("slug", "case"),
    [
        ("audio-file-unreadable", "audio-file-unreadable-format-wav-scp-pipe"),
        ("config-dimension-mismatch", "config-dimension-mismatch-lora-adapter-other-base"),
    ],
)
def test_a_wording_no_signature_knows_still_finds_its_incident_among_the_leads(slug, case):
    incidents, signatures = engine_specs()
    index = build_index(incidents, [s for s in signatures if s.slug != slug])

    report = analyze((CASES / f"{case}.log").read_bytes(), index)

    slugs = [suggestion.slug for suggestion in report.suggestions]
    assert slug in slugs[:3]
    lead = report.suggestions[slugs.index(slug)]
    assert not lead.confident and lead.evidence[0].kind == "similar"


def test_a_build_that_lacks_nvcc_is_not_claimed_by_a_missing_fused_kernel():
    """ "flash_attn was requested, but nvcc was not found" names what is missing after the
    comma: with no signature for it, the build stage's lead comes first, and nothing else is
    confident."""
    incidents, signatures = engine_specs()
    index = build_index(incidents, [s for s in signatures if s.slug != "build-failure"])

    report = analyze((CASES / "build-failure-flash-attn-nvcc-missing.log").read_bytes(), index)

    assert report.suggestions[0].slug == "build-failure"
    assert not report.confident


def _clue(line: int, kind: str, strength: float, similarity: float = 0.0) -> Clue:
    return Clue(
        line=line,
        text=f"line {line}",
        kind=kind,
        signature="sig" if kind == "signature" else None,
        level=Level.ERROR,
        strength=strength,
        generic=False,
        similarity=similarity,
        source=f"{kind}:{line}",
    )


def test_a_faint_resemblance_adds_nothing_to_an_incident_with_stronger_evidence():
    signature = _clue(3, "signature", 0.6)
    faint = _clue(5, "similar", 0.05, similarity=SIMILARITY_FLOOR / 2)
    close = _clue(7, "similar", 0.3, similarity=SIMILARITY_FLOOR * 2)

    assert faint.faint and not close.faint and not signature.faint
    assert _combine([signature, faint]) == pytest.approx(0.6)
    assert _combine([signature, faint, close]) == pytest.approx(0.6 + CORROBORATION * 0.3)
    assert _combine([faint]) == pytest.approx(0.05)
