"""Who may do what, as a matrix: anonymous, the reporter, another engineer, a lead."""

import pytest
from django.urls import reverse

from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def incident(alice):
    return IncidentFactory(slug="alice-oom", reporter=alice)


def _edit_payload(incident, **changes):
    payload = {
        "title": incident.title,
        "symptom": incident.symptom,
        "root_cause": incident.root_cause,
        "remedy": incident.remedy,
        "discipline": incident.discipline,
        "prevention": "",
        "stage": incident.stage,
        "severity": incident.severity,
        "environment": "",
        "tags": "",
        "occurred_on": "",
        "resolved_on": "",
    }
    payload.update(changes)
    return payload


@pytest.mark.parametrize(
    ("who", "status"),
    [("anonymous", 302), ("alice_client", 200), ("bob_client", 403), ("lena_client", 200)],
)
def test_it_lets_only_the_reporter_and_leads_open_the_edit_form(
    request, client, who, status, incident
):
    actor = client if who == "anonymous" else request.getfixturevalue(who)
    response = actor.get(reverse("incidents:incident-edit", args=[incident.slug]))
    assert response.status_code == status
    if status == 302:
        assert response["Location"].startswith(reverse("login"))


@pytest.mark.parametrize(
    ("who", "saved"), [("alice_client", True), ("bob_client", False), ("lena_client", True)]
)
def test_it_saves_edits_only_from_the_reporter_or_a_lead(request, who, saved, incident):
    actor = request.getfixturevalue(who)
    payload = _edit_payload(incident, title="Renamed by " + who)
    response = actor.post(reverse("incidents:incident-edit", args=[incident.slug]), payload)
    incident.refresh_from_db()
    assert (incident.title == "Renamed by " + who) is saved
    assert response.status_code == (302 if saved else 403)


@pytest.mark.parametrize(
    "url_name",
    ["incidents:incident-list", "incidents:incident-create", "incidents:incident-similar"],
)
def test_it_shows_anonymous_visitors_the_login_page_only(client, url_name):
    response = client.get(reverse(url_name))
    assert response.status_code == 302
    assert response["Location"].startswith(reverse("login"))
    assert client.get(reverse("login")).status_code == 200


def test_it_hides_incident_details_from_anonymous_visitors(client, incident):
    response = client.get(incident.get_absolute_url())
    assert response.status_code == 302


@pytest.mark.parametrize("who", ["alice_client", "bob_client", "lena_client"])
def test_it_lets_every_engineer_read_and_record_a_recurrence(request, who, incident):
    actor = request.getfixturevalue(who)
    assert actor.get(incident.get_absolute_url()).status_code == 200
    response = actor.post(
        reverse("incidents:recurrence-create", args=[incident.slug]),
        {"occurred_on": "2026-11-02", "note": "again on node 3"},
    )
    assert response.status_code == 302
    incident.refresh_from_db()
    assert incident.recurrence_count == 1


@pytest.mark.parametrize(("who", "status"), [("alice_client", 302), ("lena_client", 200)])
def test_it_opens_the_admin_to_leads_only(request, who, status):
    actor = request.getfixturevalue(who)
    response = actor.get(reverse("admin:index"))
    assert response.status_code == status


@pytest.mark.parametrize(
    ("who", "method", "status"),
    [
        ("alice_client", "patch", 200),
        ("bob_client", "patch", 403),
        ("lena_client", "patch", 200),
        ("alice_client", "delete", 403),
        ("bob_client", "delete", 403),
        ("lena_client", "delete", 204),
    ],
)
def test_it_applies_the_same_matrix_to_the_api(request, who, method, status, incident):
    actor = request.getfixturevalue(who)
    url = reverse("incidents-api:incident-detail", args=[incident.slug])
    body = {"title": "Changed via API"} if method == "patch" else None
    response = getattr(actor, method)(url, body, content_type="application/json")
    assert response.status_code == status
    if status == 403:
        assert response.json()["error"]["status"] == 403


def test_it_lets_only_leads_write_signatures_through_the_api(alice_client, incident):
    response = alice_client.post(
        reverse("incidents-api:signature-list"),
        {"incident": incident.slug, "pattern": "sample failure", "examples": "sample failure 1"},
        content_type="application/json",
    )
    assert response.status_code == 403
