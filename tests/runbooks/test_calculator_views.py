"""The calculators on the runbook pages: computed on the server, via htmx or a plain POST."""

import pytest
from django.urls import reverse

pytestmark = pytest.mark.django_db

MEMORY = {
    "batch_a": "4",
    "memory_a": "20480",
    "batch_b": "8",
    "memory_b": "32768",
    "memory_unit": "MiB",
    "card_memory": "64",
    "card_unit": "GiB",
    "margin_percent": "10",
    "planned_batch": "",
}
SCALING = {
    "compute_time": "400",
    "compute_unit": "ms",
    "communication_time": "100",
    "communication_unit": "ms",
    "cards": "16",
}
HTMX = {"HTTP_HX_REQUEST": "true"}


def _url(slug: str) -> str:
    return reverse("runbooks:runbook-calculate", args=[slug])


def test_it_answers_htmx_with_the_calculator_fragment_only(alice_client, runbooks):
    response = alice_client.post(_url("diagnose-train"), MEMORY, **HTMX)
    page = response.content.decode()
    assert response.status_code == 200
    assert "<html" not in page
    assert page.lstrip().startswith('<section class="card calc" id="calculator">')
    assert "Largest batch that fits: <strong>16</strong>" in page
    assert "3.0 GiB" in page  # per sample
    assert "8.0 GiB" in page  # fixed


def test_it_answers_a_plain_post_with_the_whole_page(alice_client, runbooks):
    response = alice_client.post(_url("diagnose-train"), MEMORY)
    page = response.content.decode()
    assert response.status_code == 200
    assert "<html" in page and "Diagnose a failed training stage" in page
    assert "Largest batch that fits: <strong>16</strong>" in page


def test_it_says_whether_a_copied_batch_size_fits(alice_client, runbooks):
    page = alice_client.post(
        _url("diagnose-train"), {**MEMORY, "card_memory": "40", "planned_batch": "21"}, **HTMX
    ).content.decode()
    assert "Batch 21 does not fit" in page
    assert "Use 9 or less on this card." in page


def test_it_computes_scaling_efficiency(alice_client, runbooks):
    page = alice_client.post(_url("multi-node-communication"), SCALING, **HTMX).content.decode()
    assert "Scaling efficiency: <strong>80.0%</strong>" in page
    assert "16 cards do the work of about 12.8 perfectly scaled ones." in page


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"card_memory": "0"}, "Enter a number greater than zero."),
        ({"batch_a": "-4"}, "Enter a number greater than zero."),
        ({"memory_a": "lots"}, "Enter a number, such as 12 or 7.5."),
        ({"card_memory": "10000"}, "is not a plausible memory for one card"),
        ({"card_unit": "PiB"}, "Unknown unit “PiB”: use MiB / GiB."),
        ({"batch_b": "4"}, "Measure at two different batch sizes"),
        ({"memory_b": "10000"}, "Peak memory must grow with the batch size"),
    ],
)
def test_it_explains_bad_memory_input(alice_client, runbooks, change, message):
    htmx = alice_client.post(_url("diagnose-train"), {**MEMORY, **change}, **HTMX)
    assert htmx.status_code == 200  # htmx swaps only 2xx responses in
    assert message in htmx.content.decode()
    assert "Largest batch" not in htmx.content.decode()
    plain = alice_client.post(_url("diagnose-train"), {**MEMORY, **change})
    assert plain.status_code == 400
    assert message in plain.content.decode()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"compute_time": "0"}, "Enter a number greater than zero."),
        ({"communication_time": "-10"}, "Communication time cannot be negative"),
        ({"compute_time": "abc"}, "Enter a number, such as 12 or 7.5."),
        ({"compute_time": "2", "compute_unit": "h"}, "Unknown unit"),
        ({"compute_time": "7200", "compute_unit": "s"}, "more than an hour"),
    ],
)
def test_it_explains_bad_timing_input(alice_client, runbooks, change, message):
    response = alice_client.post(_url("multi-node-communication"), {**SCALING, **change}, **HTMX)
    assert message in response.content.decode()
    assert "Scaling efficiency:" not in response.content.decode()


def test_it_keeps_what_was_typed_after_an_error(alice_client, runbooks):
    page = alice_client.post(
        _url("diagnose-train"), {**MEMORY, "card_memory": "0"}, **HTMX
    ).content.decode()
    assert 'value="20480"' in page


def test_it_has_no_calculator_where_the_runbook_shows_none(alice_client, runbooks):
    assert alice_client.post(_url("diagnose-build"), MEMORY).status_code == 404


def test_it_only_accepts_post(alice_client, runbooks):
    assert alice_client.get(_url("diagnose-train")).status_code == 405


def test_it_passes_the_calculators_messages_through_translation(
    alice_client, runbooks, monkeypatch
):
    monkeypatch.setattr("common.translation.gettext", lambda message: "【译】" + message)
    response = alice_client.post(_url("diagnose-train"), {**MEMORY, "card_memory": "0"}, **HTMX)
    assert "【译】Enter a number greater than zero." in response.content.decode()
