"""The two handbook calculators, as plain functions: results, units and clear refusals."""

import ast
from pathlib import Path

import pytest

from runbooks import calculators
from runbooks.calculators import (
    CalculatorInputError,
    memory_headroom,
    scaling_efficiency,
)

# Peaks of 20 GiB at batch 4 and 32 GiB at batch 8: 3 GiB per sample on top of 8 GiB fixed.
POINTS = {"batch_a": 4, "memory_a": 20480, "batch_b": 8, "memory_b": 32768}


def _problems(call, **kwargs) -> dict:
    with pytest.raises(CalculatorInputError) as caught:
        call(**kwargs)
    return {problem.field: str(problem) for problem in caught.value.problems}


def test_it_finds_the_largest_batch_that_fits_one_card():
    result = memory_headroom(**POINTS, card_memory=64, card_unit="GiB", margin_percent=10)
    assert result.per_sample_mib == pytest.approx(3072)
    assert result.fixed_mib == pytest.approx(8192)
    assert result.usable_mib == pytest.approx(64 * 1024 * 0.9)
    # (57.6 GiB − 8 GiB) / 3 GiB = 16.5 → 16 samples
    assert result.max_batch == 16
    assert result.memory_at_max_mib == pytest.approx(8192 + 16 * 3072)


def test_it_stops_a_batch_copied_from_a_card_with_twice_the_memory():
    big = memory_headroom(**POINTS, card_memory=80, planned_batch=20)
    small = memory_headroom(**POINTS, card_memory=40, planned_batch=big.max_batch)
    assert big.max_batch == 21 and big.planned_fits
    assert small.max_batch == 9
    assert small.planned_fits is False


def test_it_accepts_the_points_in_either_order_and_gib():
    swapped = memory_headroom(
        batch_a=8,
        memory_a=32,
        batch_b=4,
        memory_b=20,
        memory_unit="GiB",
        card_memory=65536,
        card_unit="MiB",
    )
    assert swapped.max_batch == 16


def test_it_counts_an_exact_fit_as_fitting():
    result = memory_headroom(
        batch_a=1, memory_a=2048, batch_b=2, memory_b=3072, card_memory=16, margin_percent=0
    )
    assert result.max_batch == 15  # 1 GiB fixed + 15 × 1 GiB = 16 GiB exactly


def test_it_says_when_not_even_one_sample_fits():
    result = memory_headroom(
        batch_a=1, memory_a=15000, batch_b=2, memory_b=16000, card_memory=16, margin_percent=10
    )
    assert result.max_batch == 0
    assert not result.fits


def test_it_reads_the_strings_a_form_sends():
    result = memory_headroom(
        batch_a="4",
        memory_a=" 20480 ",
        batch_b="8",
        memory_b="32768",
        card_memory="64",
        margin_percent="10",
        planned_batch="",
    )
    assert result.max_batch == 16 and result.planned_batch is None


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"batch_a": 0}, "batch_a", "greater than zero"),
        ({"memory_b": -5}, "memory_b", "greater than zero"),
        ({"card_memory": "sixty"}, "card_memory", "Enter a number"),
        ({"card_memory": "nan"}, "card_memory", "Enter a number"),
        ({"batch_a": "2.5"}, "batch_a", "whole number"),
        ({"card_memory": 10_000}, "card_memory", "not a plausible memory"),
        ({"card_memory": 80, "card_unit": "MiB"}, "card_memory", "check the number and the unit"),
        ({"card_unit": "TB"}, "card_unit", "Unknown unit"),
        ({"margin_percent": 75}, "margin_percent", "from 0 to 50"),
        ({"batch_b": 4}, "batch_b", "two different batch sizes"),
        ({"memory_b": 2000}, None, "must grow with the batch size"),
        ({"memory_b": 20480}, None, "must grow with the batch size"),
        ({"memory_b": 70 * 1024}, "memory_b", "more than the card holds"),
        ({"memory_a": 1000, "memory_b": 20000}, None, "negative fixed cost"),
    ],
)
def test_it_refuses_bad_memory_input_with_a_clear_message(change, field, words):
    kwargs = {**POINTS, "card_memory": 64, **change}
    problems = _problems(memory_headroom, **kwargs)
    assert field in problems, problems
    assert words in problems[field]


def test_it_reports_every_bad_field_at_once():
    problems = _problems(
        memory_headroom, batch_a="", memory_a="x", batch_b=-1, memory_b=0, card_memory=""
    )
    assert set(problems) == {"batch_a", "memory_a", "batch_b", "memory_b", "card_memory"}


def test_it_computes_scaling_efficiency():
    result = scaling_efficiency(compute_time=400, communication_time=100, cards=16)
    assert result.efficiency == pytest.approx(0.8)
    assert result.ratio == pytest.approx(0.25)
    assert result.effective_cards == pytest.approx(12.8)
    assert result.verdict == "fair"


def test_it_converts_time_units_and_allows_fully_overlapped_communication():
    mixed = scaling_efficiency(
        compute_time="0.5", compute_unit="s", communication_time="25", communication_unit="ms"
    )
    assert mixed.efficiency == pytest.approx(1 / 1.05)
    assert mixed.verdict == "good"
    assert scaling_efficiency(compute_time=300, communication_time=0).efficiency == 1.0
    assert scaling_efficiency(compute_time=100, communication_time=200).verdict == "poor"


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        ({"compute_time": 0}, "compute_time", "greater than zero"),
        ({"compute_time": -3}, "compute_time", "greater than zero"),
        ({"communication_time": -1}, "communication_time", "cannot be negative"),
        ({"communication_time": "fast"}, "communication_time", "Enter a number"),
        ({"compute_time": 5000, "compute_unit": "s"}, "compute_time", "more than an hour"),
        ({"compute_time": 0.001}, "compute_time", "too short"),
        ({"compute_unit": "min"}, "compute_unit", "Unknown unit"),
        ({"cards": 2.5}, "cards", "whole number"),
        ({"cards": 0}, "cards", "greater than zero"),
    ],
)
def test_it_refuses_bad_timing_input_with_a_clear_message(change, field, words):
    kwargs = {"compute_time": 400, "communication_time": 100, **change}
    problems = _problems(scaling_efficiency, **kwargs)
    assert field in problems, problems
    assert words in problems[field]


def test_the_calculators_stay_plain_python():
    tree = ast.parse(Path(calculators.__file__).read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            imported.add((node.module or "").split(".")[0])
    assert not imported & {"django", "rest_framework", "incidents", "runbooks"}, imported
