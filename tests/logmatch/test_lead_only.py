"""A signature whose line has several usual causes (`lead_only`) ranks its incident but never
makes it the answer; neither does the incident's symptom line when only such signatures
recognise it, and another signature of the incident still confirms it."""

from __future__ import annotations

from incidents.logmatch import IncidentSpec, SignatureSpec, analyze, build_index

BARE = "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn"
WARNED = "\n".join(
    [
        "/usr/lib/python3.11/site-packages/torch/utils/checkpoint.py:87: UserWarning: "
        "None of the inputs have requires_grad=True. Gradients will be None",
        BARE,
    ]
)
INCIDENTS = [
    IncidentSpec(
        "frozen-inputs",
        "No gradient reaches the loss under gradient checkpointing",
        "train",
        BARE,
        "Only adapter weights require grad and no input of a checkpointed block does.",
    )
]
LOSS = SignatureSpec("loss", "frozen-inputs", r"does not require grad", lead_only=True)
CHECKPOINT = SignatureSpec(
    "checkpoint", "frozen-inputs", r"None of the inputs have requires_grad=True"
)


def _first(tail: str, signatures):
    report = analyze(tail, build_index(INCIDENTS, list(signatures)))
    return report.suggestions[0]


def test_a_symptom_line_only_lead_only_signatures_recognise_is_a_lead():
    first = _first(BARE, [LOSS, CHECKPOINT])
    assert first.slug == "frozen-inputs" and not first.confident


def test_the_same_symptom_line_confirms_when_its_signature_is_not_lead_only():
    sure = SignatureSpec(LOSS.key, LOSS.slug, LOSS.pattern)
    assert _first(BARE, [sure, CHECKPOINT]).confident


def test_a_symptom_line_no_signature_recognises_still_confirms():
    assert _first(BARE, [CHECKPOINT]).confident


def test_another_signature_of_the_incident_makes_it_the_answer():
    first = _first(WARNED, [LOSS, CHECKPOINT])
    assert first.slug == "frozen-inputs" and first.confident
