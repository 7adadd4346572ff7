"""Every page and API endpoint, for every role: who gets in, who is refused, and how.

The URLs come from the resolver itself, so a new URL fails `test_every_url_is_in_the_matrix`
until someone decides here who may use it. Each case sends a valid body, so an allowed role
really succeeds and a refusal is the gate speaking, not the data.

Roles: anonymous; alice, the engineer who reported the incident and started the run; bob,
another engineer; lena, a lead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import pytest
from django.urls import NoReverseMatch, reverse

from incidents.models import Incident, Signature
from tests.security.conftest import UNEXPLAINED_TAIL, World, api_client_for
from tests.security.forms import (
    MEMORY_HEADROOM,
    incident_api,
    incident_form,
    runbook_edit_form,
    signature_form,
)
from tests.security.routes import (
    ALICE,
    ANONYMOUS,
    BOB,
    LENA,
    ROLES,
    ROUTES,
    SITE,
    excerpt,
    role_client,
    to_login,
)

pytestmark = pytest.mark.django_db

PUBLIC = frozenset(ROLES)
SIGNED_IN = frozenset({ALICE, BOB, LENA})
OWNER_OR_LEAD = frozenset({ALICE, LENA})  # alice reported the incident and started the run
LEAD = frozenset({LENA})


@dataclass(frozen=True)
class Rule:
    allowed: frozenset[str]
    ok: tuple[int, ...]  # what an allowed role gets
    body: Callable[[World, str], dict] = field(default=lambda world, role: {})


def rule(allowed, *ok, body=None) -> Rule:
    return Rule(allowed, ok, body or (lambda world, role: {}))


# --- the matrix: URL name → method → who may, and what they get ---------------------------

PAGES: dict[str, dict[str, Rule]] = {
    "home": {"GET": rule(SIGNED_IN, 302), "POST": rule(SIGNED_IN, 302)},  # a RedirectView
    "login": {
        "GET": rule(PUBLIC, 200, 302),  # a signed-in visitor is sent on
        "POST": rule(PUBLIC, 302, body=lambda w, r: {"username": "bob", "password": "pw-bob"}),
    },
    "logout": {"POST": rule(PUBLIC, 302)},
    "healthz": {"GET": rule(PUBLIC, 200), "POST": rule(PUBLIC, 405)},  # for load balancers
    "kb-script": {"GET": rule(PUBLIC, 200), "POST": rule(PUBLIC, 405)},  # curl from a node
    "language-set": {"POST": rule(SIGNED_IN, 302, body=lambda w, r: {"language": "en"})},
    "account": {"GET": rule(SIGNED_IN, 200), "POST": rule(SIGNED_IN, 200)},
    "incidents:incident-list": {"GET": rule(SIGNED_IN, 200)},
    "incidents:incident-create": {
        "GET": rule(SIGNED_IN, 200),
        "POST": rule(SIGNED_IN, 302, body=lambda w, r: incident_form()),
    },
    "incidents:incident-similar": {"GET": rule(SIGNED_IN, 200)},
    "incidents:incident-detail": {"GET": rule(SIGNED_IN, 200)},
    "incidents:incident-edit": {
        "GET": rule(OWNER_OR_LEAD, 200),
        "POST": rule(
            OWNER_OR_LEAD, 302, body=lambda w, r: incident_form(w.incident, title=f"Edited by {r}")
        ),
    },
    "incidents:recurrence-create": {
        "POST": rule(SIGNED_IN, 302, body=lambda w, r: {"note": f"again, says {r}"})
    },
    "incidents:signature-create": {
        "GET": rule(LEAD, 200),
        "POST": rule(LEAD, 302, body=lambda w, r: signature_form()),
    },
    "incidents:signature-edit": {
        "GET": rule(LEAD, 200),
        "POST": rule(LEAD, 302, body=lambda w, r: signature_form(note=f"by {r}")),
    },
    "incidents:signature-try": {
        "POST": rule(LEAD, 200, body=lambda w, r: {"pattern": "lost its grip", "sample": "x"})
    },
    "incidents:analysis-new": {
        "GET": rule(SIGNED_IN, 200),
        "POST": rule(SIGNED_IN, 302, body=lambda w, r: {"log": UNEXPLAINED_TAIL}),
    },
    "incidents:analysis-detail": {"GET": rule(SIGNED_IN, 200)},
    "incidents:analysis-feedback": {
        "POST": rule(
            SIGNED_IN, 302, body=lambda w, r: {"incident": w.incident.slug, "verdict": "not-it"}
        )
    },
    "incidents:gap-list": {"GET": rule(SIGNED_IN, 200)},
    "incidents:gap-draft": {"GET": rule(SIGNED_IN, 302)},
    "runbooks:runbook-list": {"GET": rule(SIGNED_IN, 200)},
    "runbooks:run-list": {"GET": rule(SIGNED_IN, 200)},
    "runbooks:run-detail": {
        "GET": rule(SIGNED_IN, 200),
        "POST": rule(OWNER_OR_LEAD, 302, body=lambda w, r: {"ticked": ["0"], "note": f"by {r}"}),
    },
    "runbooks:runbook-detail": {"GET": rule(SIGNED_IN, 200)},
    "runbooks:runbook-edit": {
        "GET": rule(LEAD, 200),
        "POST": rule(LEAD, 302, body=lambda w, r: runbook_edit_form(w.runbook, title=f"By {r}")),
    },
    "runbooks:runbook-calculate": {"POST": rule(SIGNED_IN, 200, body=lambda w, r: MEMORY_HEADROOM)},
    "runbooks:run-start": {"POST": rule(SIGNED_IN, 302)},
    "reports:matrix": {"GET": rule(SIGNED_IN, 200)},
    "reports:matrix-csv": {"GET": rule(SIGNED_IN, 200)},
    "reports:matrix-markdown": {"GET": rule(SIGNED_IN, 200)},
    "reports:weekly-list": {"GET": rule(SIGNED_IN, 200)},
    "reports:weekly-detail": {"GET": rule(SIGNED_IN, 200)},
    "reports:weekly-build": {"POST": rule(LEAD, 302)},
    "reports:weekly-review": {"POST": rule(LEAD, 302, body=lambda w, r: {"notes": f"by {r}"})},
    "reports:weekly-csv": {"GET": rule(SIGNED_IN, 200)},
    "reports:weekly-chart": {"GET": rule(SIGNED_IN, 200)},
    "api-docs": {"GET": rule(SIGNED_IN, 200)},
    "api-redoc": {"GET": rule(SIGNED_IN, 200)},
}

API: dict[str, dict[str, Rule]] = {
    "incidents-api:incident-list": {
        "GET": rule(SIGNED_IN, 200),
        "POST": rule(SIGNED_IN, 201, body=lambda w, r: incident_api()),
    },
    "incidents-api:incident-detail": {
        "GET": rule(SIGNED_IN, 200),
        "PUT": rule(
            OWNER_OR_LEAD,
            200,
            body=lambda w, r: incident_api(
                title=f"Put by {r}", symptom=w.incident.symptom, stage="train"
            ),
        ),
        "PATCH": rule(OWNER_OR_LEAD, 200, body=lambda w, r: {"title": f"Patched by {r}"}),
        "DELETE": rule(LEAD, 204),
    },
    "incidents-api:signature-list": {
        "GET": rule(SIGNED_IN, 200),
        "POST": rule(
            LEAD, 201, body=lambda w, r: {**signature_form(), "incident": w.incident.slug}
        ),
    },
    "incidents-api:signature-detail": {
        "GET": rule(SIGNED_IN, 200),
        "PUT": rule(
            LEAD,
            200,
            body=lambda w, r: {**signature_form(), "incident": w.incident.slug, "enabled": True},
        ),
        "PATCH": rule(LEAD, 200, body=lambda w, r: {"note": f"by {r}"}),
        "DELETE": rule(LEAD, 204),
    },
    "incidents-api:recurrence-list": {
        "GET": rule(SIGNED_IN, 200),
        "POST": rule(
            SIGNED_IN, 201, body=lambda w, r: {"incident": w.incident.slug, "note": f"by {r}"}
        ),
    },
    "incidents-api:recurrence-detail": {"GET": rule(SIGNED_IN, 200)},
    "incidents-api:analysis-list": {
        "GET": rule(SIGNED_IN, 200),
        "POST": rule(SIGNED_IN, 202, body=lambda w, r: {"log": UNEXPLAINED_TAIL}),
    },
    "incidents-api:analysis-detail": {"GET": rule(SIGNED_IN, 200)},
    "incidents-api:analysis-feedback": {
        "POST": rule(
            SIGNED_IN, 200, body=lambda w, r: {"incident": w.incident.slug, "verdict": "fixed"}
        )
    },
    "incidents-api:gap-list": {"GET": rule(SIGNED_IN, 200)},
    "incidents-api:gap-detail": {"GET": rule(SIGNED_IN, 200)},
    "runbooks-api:runbook-list": {"GET": rule(SIGNED_IN, 200)},
    "runbooks-api:runbook-detail": {"GET": rule(SIGNED_IN, 200)},
    "runbooks-api:checklist-run-list": {"GET": rule(SIGNED_IN, 200)},
    "runbooks-api:checklist-run-detail": {"GET": rule(SIGNED_IN, 200)},
    "reports-api:matrix": {"GET": rule(SIGNED_IN, 200)},
    "reports-api:weekly-list": {"GET": rule(SIGNED_IN, 200)},
    "reports-api:weekly-detail": {"GET": rule(SIGNED_IN, 200)},
    "reports-api:weekly-review": {"POST": rule(LEAD, 200, body=lambda w, r: {"notes": "by " + r})},
    "reports-api:weekly-build": {"POST": rule(LEAD, 200)},
    "api-schema": {"GET": rule(SIGNED_IN, 200)},
}

# The real object behind each URL argument.
ARGS: dict[str, Callable[[World], dict]] = {
    **{
        name: lambda w: {"slug": w.incident.slug}
        for name in (
            "incidents:incident-detail",
            "incidents:incident-edit",
            "incidents:recurrence-create",
            "incidents:signature-create",
            "incidents-api:incident-detail",
        )
    },
    **{
        name: lambda w: {"slug": w.runbook.slug}
        for name in (
            "runbooks:runbook-detail",
            "runbooks:runbook-edit",
            "runbooks:runbook-calculate",
            "runbooks:run-start",
            "runbooks-api:runbook-detail",
        )
    },
    **{
        name: lambda w: {"pk": w.analysis.pk}
        for name in (
            "incidents:analysis-detail",
            "incidents:analysis-feedback",
            "incidents-api:analysis-detail",
            "incidents-api:analysis-feedback",
        )
    },
    **{
        name: lambda w: {"week": w.report.week_start}
        for name in (
            "reports:weekly-detail",
            "reports:weekly-build",
            "reports:weekly-review",
            "reports:weekly-csv",
            "reports:weekly-chart",
            "reports-api:weekly-detail",
            "reports-api:weekly-review",
            "reports-api:weekly-build",
        )
    },
    "incidents:signature-edit": lambda w: {"pk": w.signature.pk},
    "incidents-api:signature-detail": lambda w: {"pk": w.signature.pk},
    "incidents-api:recurrence-detail": lambda w: {"pk": w.recurrence.pk},
    "incidents:gap-draft": lambda w: {"pk": w.gap.pk},
    "incidents-api:gap-detail": lambda w: {"pk": w.gap.pk},
    "runbooks:run-detail": lambda w: {"pk": w.run.pk},
    "runbooks-api:checklist-run-detail": lambda w: {"pk": w.run.pk},
}


# --- the URLs the matrix covers ----------------------------------------------------------

PAGE_METHODS = ("GET", "POST")
API_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")


def _cases():
    for name in {**PAGES, **API}:
        for method in API_METHODS if name in API else PAGE_METHODS:
            yield pytest.param(name, method, id=f"{name}-{method}")


def test_every_url_is_in_the_matrix():
    unnamed = [p for name, p, _ in ROUTES if name is None and not p.startswith("admin/")]
    assert not unnamed, f"Name these URLs so that the matrix can cover them: {unnamed}"
    missing = sorted(set(SITE) - set(PAGES) - set(API))
    assert not missing, f"New URLs: decide in PAGES or API who may use them: {missing}"
    assert not (set(PAGES) | set(API)) - set(SITE), "The matrix names URLs that no longer exist"


def test_every_url_with_arguments_gets_a_real_object():
    for name in SITE:
        try:
            reverse(name)
        except NoReverseMatch:
            assert name in ARGS, f"{name} takes arguments: fill them in ARGS"


# --- the walk ---------------------------------------------------------------------------


def _send(client, method: str, url: str, body: dict, *, api: bool):
    call = getattr(client, method.lower())
    if api:
        accept = {"HTTP_ACCEPT": "application/json"}
        return call(url, body, format="json", **accept) if method != "GET" else call(url, **accept)
    if method == "GET":
        return call(url)
    return call(url, body)


@pytest.mark.parametrize(("name", "method"), list(_cases()))
def test_it_lets_in_only_who_the_matrix_says(name, method, world, alice, bob, lena):
    api = name in API
    spec = (API if api else PAGES)[name].get(method)
    url = reverse(name, kwargs=ARGS[name](world) if name in ARGS else None)
    users = {ALICE: alice, BOB: bob, LENA: lena}
    wrong = []
    for role in ROLES:
        body = spec.body(world, role) if spec else {}
        response = _send(role_client(role, users, api=api), method, url, body, api=api)
        status = response.status_code
        got = f"{role}: {method} {url} → {status}"
        if status >= 500:
            wrong.append(f"{got} (server error)")
        elif spec is not None and role in spec.allowed:
            if status not in spec.ok:
                wrong.append(f"{got}, expected {spec.ok}: {excerpt(response)}")
        elif role == ANONYMOUS:
            if api and (status != 401 or response.json()["error"]["status"] != 401):
                wrong.append(f"{got}, expected 401 with the error body")
            if not api and not to_login(response):
                wrong.append(f"{got}, expected a redirect to the sign-in page")
        elif spec is None:
            # Not a method of this URL; a lead-writes endpoint may refuse an engineer first.
            if status != 405 and not (status == 403 and role != LENA):
                wrong.append(f"{got}, expected 405")
        elif status != 403:
            wrong.append(f"{got}, expected 403 (refused)")
        elif api and response.json()["error"]["status"] != 403:
            wrong.append(f"{got} without the error body")
    assert not wrong, "\n".join(wrong)


def test_refused_writes_change_nothing(world, bob, bob_client, alice_client):
    """The gate comes before the form: a refused write leaves the database as it was."""
    incident, signature, report = world.incident, world.signature, world.report
    bob_client.post(
        reverse("incidents:incident-edit", args=[incident.slug]),
        incident_form(incident, title="Edited by bob"),
    )
    alice_client.post(
        reverse("incidents:signature-edit", args=[signature.pk]), signature_form(note="by alice")
    )
    alice_client.post(reverse("reports:weekly-review", args=[report.week_start]), {"notes": "x"})
    api = api_client_for(bob)
    api.delete(reverse("incidents-api:incident-detail", args=[incident.slug]))
    api.patch(
        reverse("incidents-api:signature-detail", args=[signature.pk]),
        {"note": "by bob"},
        format="json",
    )
    assert Incident.objects.get(pk=incident.pk).title == incident.title
    assert Signature.objects.get(pk=signature.pk).note == signature.note
    report.refresh_from_db()
    assert report.reviewed_at is None
