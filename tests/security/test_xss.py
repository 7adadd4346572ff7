"""Hostile text typed or pasted anywhere is shown as text, everywhere it shows.

Every field people write (incident columns and tags, signature note and examples, recurrence
note, runbook steps, checklist notes, review notes) and every pasted log line (errors, warnings,
evidence, the gap's key line) carries the payloads below, entered through the real forms.
Then each page and htmx fragment that shows them is read the way a browser would: nothing in
it may run script, and the payloads must be visible as the literal text that was typed.
"""

from __future__ import annotations

import pytest
from django.urls import reverse

from common.weeks import week_last_completed
from incidents.models import Incident
from reports.services import report_week_build
from tests.security.conftest import World
from tests.security.forms import incident_form, runbook_edit_form, signature_form
from tests.security.html import script_risks, visible_text

pytestmark = pytest.mark.django_db

SCRIPT = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(1)>'
JS_URL = "javascript:alert(1)"
TEMPLATE = "{{7*7}}"
PAYLOADS = (SCRIPT, IMG, JS_URL, TEMPLATE)
ALL = " ".join(PAYLOADS)

HOSTILE_TAIL = "\n".join(
    [
        "step 118 loss 2.31",
        *[f"[WARNING] {IMG} retrying shard {n}" for n in range(40)],  # a flood, grouped
        f"ERROR {SCRIPT} collective failed on rank 3",
        f"ERROR {TEMPLATE} {JS_URL}",
        f"RuntimeError: fused_adam kernel lost its grip on rank 3 {SCRIPT}",
    ]
)
UNEXPLAINED_HOSTILE_TAIL = f"step 1 loss 8.8\nValueError: unexplained {IMG} {TEMPLATE}\n"


def _ok(response, *statuses):
    assert response.status_code in (statuses or (200,)), response.content[:500]
    return response


@pytest.fixture
def hostile(world: World, alice_client, lena_client) -> World:
    """The world, with the payloads entered through the pages as people would type them."""
    _ok(
        alice_client.post(
            reverse("incidents:incident-edit", args=[world.incident.slug]),
            incident_form(
                world.incident,
                title=f"Adam {SCRIPT} {IMG}",
                symptom=f"RuntimeError: fused_adam kernel lost its grip {ALL}",
                root_cause=f"Cause {ALL}",
                remedy=f"pip install apex # {ALL}",
                prevention=f"Prevent {ALL}",
                environment=f"A100 {ALL}",
                tags=", ".join(PAYLOADS),
            ),
        ),
        302,
    )
    _ok(
        lena_client.post(
            reverse("incidents:signature-edit", args=[world.signature.pk]),
            signature_form(
                pattern=r"lost its grip",
                note=f"Note {ALL}",
                examples=f"RuntimeError: fused_adam kernel lost its grip {SCRIPT}\n{IMG} lost its grip",
            ),
        ),
        302,
    )
    _ok(
        alice_client.post(
            reverse("incidents:recurrence-create", args=[world.incident.slug]),
            {"note": f"Again {ALL}"},
        ),
        302,
    )
    steps = {"steps-0-text": f"Look {ALL}", "steps-0-command": f"ls {ALL}"}
    steps["steps-0-expected"] = f"Nothing {ALL}"
    _ok(
        lena_client.post(
            reverse("runbooks:runbook-edit", args=[world.runbook.slug]),
            runbook_edit_form(world.runbook, title=f"Runbook {SCRIPT}", **steps),
        ),
        302,
    )
    _ok(
        alice_client.post(
            reverse("runbooks:run-detail", args=[world.run.pk]),
            {"ticked": ["0"], "note": f"Run {ALL}", "step_note_0": f"Step {IMG}"},
        ),
        302,
    )
    world.report = report_week_build(week_start=week_last_completed())
    _ok(
        lena_client.post(
            reverse("reports:weekly-review", args=[world.report.week_start]),
            {"notes": f"Reviewed {ALL}"},
        ),
        302,
    )
    submitted = _ok(
        alice_client.post(
            reverse("incidents:analysis-new"),
            {"log": HOSTILE_TAIL, "log_path": f"exp/{SCRIPT}/train.log"},
        ),
        302,
    )
    from incidents import services
    from incidents.models import Analysis

    world.analysis = Analysis.objects.order_by("-pk").first()
    assert submitted["Location"] == world.analysis.get_absolute_url()
    services.analysis_run(analysis_id=world.analysis.pk)
    world.analysis.refresh_from_db()
    assert world.analysis.status == "done" and world.analysis.confident
    _ok(
        alice_client.post(reverse("incidents:analysis-new"), {"log": UNEXPLAINED_HOSTILE_TAIL}), 302
    )
    unexplained = Analysis.objects.order_by("-pk").first()
    services.analysis_run(analysis_id=unexplained.pk)
    world.gap = Analysis.objects.get(pk=unexplained.pk).gap
    world.incident = Incident.objects.get(pk=world.incident.pk)
    return world


def _assert_inert(response, *expected_text: str):
    """Nothing on the page can run; what was typed is shown, literally."""
    assert response.status_code == 200, response.content[:300]
    html = response.content.decode()
    assert not script_risks(html), (response.request["PATH_INFO"], script_risks(html))
    text = visible_text(html)
    for expected in expected_text:
        assert expected in text, (response.request["PATH_INFO"], expected)


def _page_urls(world: World) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Page → (URL, the payloads it must show as text)."""
    incident, runbook, week = world.incident.slug, world.runbook.slug, world.report.week_start
    return {
        "incident list": (reverse("incidents:incident-list"), (SCRIPT, IMG)),
        "incident list, search and tag": (
            reverse("incidents:incident-list") + f"?q={SCRIPT}&tag={IMG}",
            (),
        ),
        "incident detail": (reverse("incidents:incident-detail", args=[incident]), PAYLOADS),
        "incident edit": (reverse("incidents:incident-edit", args=[incident]), ()),
        "signature edit": (reverse("incidents:signature-edit", args=[world.signature.pk]), ()),
        "analysis": (world.analysis.get_absolute_url(), PAYLOADS),
        "analysis list": (reverse("incidents:analysis-new"), ()),
        "gaps": (reverse("incidents:gap-list"), (IMG, TEMPLATE)),
        "runbook": (reverse("runbooks:runbook-detail", args=[runbook]), PAYLOADS),
        "runbook edit": (reverse("runbooks:runbook-edit", args=[runbook]), ()),
        "run": (reverse("runbooks:run-detail", args=[world.run.pk]), ()),
        "runs": (reverse("runbooks:run-list"), ()),
        "matrix": (reverse("reports:matrix") + f"?tag={SCRIPT}&reporter={IMG}", ()),
        "weekly report": (reverse("reports:weekly-detail", args=[week]), PAYLOADS),
        "weekly reports": (reverse("reports:weekly-list"), ()),
        "admin incidents": (reverse("admin:incidents_incident_changelist"), (SCRIPT,)),
        "admin incident": (
            reverse("admin:incidents_incident_change", args=[world.incident.pk]),
            (),
        ),
    }


PAGES = [
    "incident list",
    "incident list, search and tag",
    "incident detail",
    "incident edit",
    "signature edit",
    "analysis",
    "analysis list",
    "gaps",
    "runbook",
    "runbook edit",
    "run",
    "runs",
    "matrix",
    "weekly report",
    "weekly reports",
    "admin incidents",
    "admin incident",
]


@pytest.mark.parametrize("page", PAGES)
def test_payloads_are_inert_on_every_page(hostile, lena_client, page):
    url, shown = _page_urls(hostile)[page]
    _assert_inert(lena_client.get(url), *shown)


def test_the_page_list_covers_the_urls(hostile):
    assert sorted(_page_urls(hostile)) == sorted(PAGES)


def test_payloads_are_inert_for_the_reporter_too(hostile, alice_client, bob_client):
    """alice sees the edit controls of her run; bob sees its notes as text."""
    run = reverse("runbooks:run-detail", args=[hostile.run.pk])
    _assert_inert(alice_client.get(run))
    _assert_inert(bob_client.get(run), f"Run {ALL}", f"Step {IMG}")
    _assert_inert(alice_client.get(reverse("incidents:analysis-new")), f"Adam {SCRIPT} {IMG}")


def test_the_analysis_shows_every_hostile_line_as_text(hostile, alice_client):
    html = alice_client.get(hostile.analysis.get_absolute_url()).content.decode()
    text = visible_text(html)
    assert f"ERROR {SCRIPT} collective failed on rank 3" in text  # an error line
    assert f"ERROR {TEMPLATE} {JS_URL}" in text
    assert f"lost its grip on rank 3 {SCRIPT}" in text  # evidence of the suggestion
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert SCRIPT not in html and IMG not in html


def test_the_htmx_fragments_are_inert(hostile, lena_client):
    htmx = {"HTTP_HX_REQUEST": "true"}
    analysis = lena_client.get(hostile.analysis.get_absolute_url(), **htmx)
    assert b"<html" not in analysis.content  # the fragment, not the page
    _assert_inert(analysis, f"ERROR {SCRIPT} collective failed on rank 3")
    similar = lena_client.get(
        reverse("incidents:incident-similar") + "?symptom=fused_adam kernel lost its grip",
        **htmx,
    )
    _assert_inert(similar, f"Adam {SCRIPT} {IMG}")
    tried = lena_client.post(
        reverse("incidents:signature-try"),
        {"pattern": SCRIPT, "examples": IMG, "sample": f"{SCRIPT}\n{IMG}\n{SCRIPT}"},
        **htmx,
    )
    _assert_inert(tried)
    calculated = lena_client.post(
        reverse("runbooks:runbook-calculate", args=[hostile.runbook.slug]),
        {"batch_a": SCRIPT, "memory_a": IMG, "card_memory": TEMPLATE},
        **htmx,
    )
    _assert_inert(calculated)
    status = lena_client.post(
        reverse("runbooks:run-detail", args=[hostile.run.pk]),
        {"ticked": ["0"], "note": f"Run {ALL}", "step_note_0": IMG * 40},
        **htmx,
    )
    _assert_inert(status)


def test_a_drafted_incident_keeps_the_key_line_as_text(hostile, alice_client):
    gap = hostile.gap
    assert gap is not None and IMG in gap.example_line
    draft = alice_client.get(reverse("incidents:gap-draft", args=[gap.pk]), follow=True)
    _assert_inert(draft)
    assert IMG in draft.context["form"].initial["symptom"]


def test_form_errors_echo_input_as_text(alice_client, world):
    """Validation messages that quote what was typed (a too-long tag) escape it too."""
    response = alice_client.post(
        reverse("incidents:incident-create"), incident_form(tags=SCRIPT * 3)
    )
    assert response.status_code == 400
    _assert_inert_status(response)
    assert SCRIPT * 3 in visible_text(response.content.decode())


def _assert_inert_status(response):
    assert not script_risks(response.content.decode())


def test_the_sign_in_page_does_not_reflect_next_as_markup(client):
    response = client.get(reverse("login") + f"?next={IMG}")
    assert not script_risks(response.content.decode())
    after = client.post(
        reverse("login") + f"?next={JS_URL}", {"username": "x", "password": "y", "next": JS_URL}
    )
    assert not script_risks(after.content.decode())


def test_the_api_returns_payloads_as_json_data(hostile, lena):
    from tests.security.conftest import api_client_for

    api = api_client_for(lena)
    response = api.get(reverse("incidents-api:incident-detail", args=[hostile.incident.slug]))
    assert response["Content-Type"] == "application/json"
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response.json()["title"] == f"Adam {SCRIPT} {IMG}"
    assert sorted(response.json()["tags"]) == sorted(p.lower() for p in PAYLOADS)
    analysis = api.get(reverse("incidents-api:analysis-detail", args=[hostile.analysis.pk]))
    assert analysis["Content-Type"] == "application/json"


def test_the_exports_keep_payloads_as_text(hostile, lena_client):
    matrix = lena_client.get(reverse("reports:matrix-markdown"))
    assert matrix["Content-Disposition"].startswith("attachment;")
    csv = lena_client.get(reverse("reports:weekly-csv", args=[hostile.report.week_start]))
    assert csv["Content-Type"].startswith("text/csv")
    assert csv["Content-Disposition"].startswith("attachment;")


@pytest.mark.parametrize(
    "html",
    [
        f"<p>{SCRIPT}</p>",
        f'<input value="{IMG}">',
        '<a href=" JavaScript:alert(1)">x</a>',
        '<div style="background:red">x</div>',
        '<script src="https://cdn.example.com/x.js"></script>',
        "<iframe src=/></iframe>",
    ],
)
def test_the_scanner_sees_what_a_browser_would_run(html):
    assert script_risks(html)
