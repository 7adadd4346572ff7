"""The REST API: token and session auth, filters, pagination and one error body."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from incidents.models import Incident, Recurrence, Signature
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db

LIST = reverse("incidents-api:incident-list")
NEW = {
    "title": "HCCL timeout after switch reboot",
    "symptom": "[ERROR] HCCL(12345,python):2026-11-30-10:00:00 [hccl_timeout] wait timeout",
    "root_cause": "The switch port flapped after a firmware reboot.",
    "remedy": "hccn_tool -i 0 -link -g",
    "discipline": "tiny-sample",
    "stage": "train",
    "tags": ["hccl", "ascend"],
}


@pytest.fixture
def api(alice):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=alice).key)
    return client


def test_it_refuses_anonymous_requests_with_the_error_body(client):
    response = client.get(LIST)
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["error"] == {
        "status": 401,
        "code": "not_authenticated",
        "message": "Authentication credentials were not provided.",
        "fields": {},
    }


def test_it_creates_an_incident_with_a_token(api, alice):
    response = api.post(LIST, NEW, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["slug"] == "hccl-timeout-after-switch-reboot"
    assert body["reporter"] == "alice"
    assert sorted(body["tags"]) == ["ascend", "hccl"]
    assert Incident.objects.get(slug=body["slug"]).reporter == alice


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"stage": "deploy"}, "stage"),
        ({"discipline": "hope"}, "discipline"),
        ({"title": "x" * 300}, "title"),
        ({"occurred_on": "2026-13-01"}, "occurred_on"),
        ({"occurred_on": "2026-11-02", "resolved_on": "2026-11-01"}, "resolved_on"),
        ({"root_cause": ""}, "root_cause"),
    ],
)
def test_it_answers_bad_input_with_field_errors(api, change, field):
    response = api.post(LIST, {**NEW, **change}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["fields"]
    assert Incident.objects.count() == 0


def test_it_refuses_a_duplicate_slug(api):
    IncidentFactory(slug="dup")
    response = api.post(LIST, {**NEW, "slug": "dup"}, format="json")
    assert response.status_code == 400
    assert "already exists" in response.json()["error"]["fields"]["slug"][0]


def test_it_answers_malformed_json_with_a_400(api):
    response = api.post(LIST, "{not json", content_type="application/json")
    assert response.status_code == 400
    assert "JSON parse error" in response.json()["error"]["message"]


def test_it_filters_and_paginates(api):
    for n in range(3):
        IncidentFactory(slug=f"serve-{n}", stage="serve")
    IncidentFactory(slug="train-0", stage="train")
    first = api.get(LIST, {"stage": "serve", "page_size": 2}).json()
    assert [r["slug"] for r in first["results"]] == ["serve-2", "serve-1"]
    assert first["previous"] is None
    assert "stage=serve" in first["next"] and "page_size=2" in first["next"]
    second = api.get(first["next"]).json()
    assert [r["slug"] for r in second["results"]] == ["serve-0"]
    assert second["next"] is None
    back = api.get(second["previous"]).json()
    assert back["results"] == first["results"] and back["previous"] is None


def test_it_explains_an_unknown_filter_value(api):
    response = api.get(LIST, {"stage": "deploy"})
    assert response.status_code == 400
    assert "stage" in response.json()["error"]["fields"]


def test_it_searches_through_the_api(api, catalog):
    slugs = [r["slug"] for r in api.get(LIST, {"q": "显存", "page_size": 100}).json()["results"]]
    assert "gpu-oom" in slugs


def test_it_records_recurrences(api, alice):
    IncidentFactory(slug="again")
    response = api.post(
        reverse("incidents-api:recurrence-list"),
        {"incident": "again", "occurred_on": "2026-11-29", "note": "node 7"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    body = response.json()
    assert (body["incident"], body["occurred_on"], body["note"]) == (
        "again",
        "2026-11-29",
        "node 7",
    )
    assert body["reported_by"] == "alice"
    assert Recurrence.objects.get().reported_by == alice
    assert Incident.objects.get(slug="again").recurrence_count == 1


def test_it_does_not_let_the_slug_change(api, alice):
    IncidentFactory(slug="fixed", reporter=alice)
    url = reverse("incidents-api:incident-detail", args=["fixed"])
    response = api.patch(url, {"slug": "moved"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {
        "slug": ["The slug of an incident cannot change."]
    }
    assert Incident.objects.filter(slug="fixed").exists()


def test_leads_manage_signatures_and_bad_expressions_are_refused(lena):
    IncidentFactory(slug="sig")
    client = APIClient()
    client.force_authenticate(lena)
    url = reverse("incidents-api:signature-list")
    good = {"incident": "sig", "pattern": r"HCCL.*wait timeout", "examples": "HCCL(1) wait timeout"}
    created = client.post(url, good, format="json")
    assert created.status_code == 201
    assert created.json()["pattern"] == good["pattern"]
    assert created.json()["author"] == "lena"
    assert created.json()["lead_only"] is False
    lead = client.post(url, {**good, "lead_only": True}, format="json")
    assert lead.status_code == 201 and lead.json()["lead_only"] is True
    assert Signature.objects.get(pk=lead.json()["id"]).lead_only
    bad = {**good, "pattern": r"(a)\1"}
    response = client.post(url, bad, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"]["pattern"][0].startswith("Does not compile in RE2")
    countered = client.post(url, {**good, "unless": "HCCL init ok"}, format="json")
    assert countered.status_code == 201
    assert countered.json()["unless"] == "HCCL init ok"
    useless = client.post(url, {**good, "unless": "wait timeout"}, format="json")
    assert useless.status_code == 400
    assert useless.json()["error"]["fields"] == {
        "unless": ["The counter-pattern rules out its own example 1: 'HCCL(1) wait timeout'."]
    }


def test_it_serves_the_schema_and_offline_docs(alice_client):
    schema = alice_client.get(reverse("api-schema"), HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    assert "/api/v1/incidents/" in schema.json()["paths"]
    docs = alice_client.get(reverse("api-docs")).content.decode()
    assert "http://" not in docs.replace("http://testserver", "")
    assert "https://" not in docs
