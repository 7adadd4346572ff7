"""Every API answer has the shape its schema publishes: a person who is gone is `null`, never a
missing key; the matrix's bounds are in the schema; its refusals use the one error body."""

from __future__ import annotations

import pytest
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator

from incidents.models import Incident, Recurrence, Signature
from tests.security.conftest import api_client_for

pytestmark = pytest.mark.django_db


@pytest.fixture
def orphans(world):
    """The world's incident, signature and recurrence after their people left the team."""
    Incident.objects.filter(pk=world.incident.pk).update(reporter=None)
    Signature.objects.filter(pk=world.signature.pk).update(author=None)
    Recurrence.objects.filter(pk=world.recurrence.pk).update(reported_by=None)
    return world


@pytest.mark.parametrize("method", ["patch", "put"])
def test_an_edit_answers_a_reporter_who_left_as_null(orphans, lena, method):
    url = reverse("incidents-api:incident-detail", args=[orphans.incident.slug])
    api = api_client_for(lena)
    body = api.get(url).json()
    sent = {"title": "Fused Adam let go"} if method == "patch" else {**body, "title": "Let go"}
    sent.pop("url", None)
    response = getattr(api, method)(url, sent, format="json")
    assert response.status_code == 200, response.json()
    assert "reporter" in response.json() and response.json()["reporter"] is None


def test_a_signature_edit_answers_an_author_who_left_as_null(orphans, lena):
    url = reverse("incidents-api:signature-detail", args=[orphans.signature.pk])
    response = api_client_for(lena).patch(url, {"note": "kept"}, format="json")
    assert response.status_code == 200, response.json()
    assert "author" in response.json() and response.json()["author"] is None


def test_every_required_person_is_in_every_answer_as_null(orphans, lena):
    api = api_client_for(lena)
    for name, url, key in (
        ("incident", reverse("incidents-api:incident-list"), "reporter"),
        ("signature", reverse("incidents-api:signature-list"), "author"),
        ("recurrence", reverse("incidents-api:recurrence-list"), "reported_by"),
    ):
        rows = api.get(url).json()["results"]
        assert rows and all(key in row for row in rows), name


def _schema() -> dict:
    return SchemaGenerator().get_schema(request=None, public=True)


def test_the_matrix_publishes_its_bounds():
    parameters = {
        parameter["name"]: parameter["schema"]
        for parameter in _schema()["paths"]["/api/v1/matrix/"]["get"]["parameters"]
    }
    assert parameters["per_stage"] == {"type": "integer", "minimum": 1, "maximum": 50}
    assert parameters["reporter"]["maxLength"] == 600
    assert parameters["tag"]["maxLength"] == 40


@pytest.mark.parametrize(
    ("query", "field"),
    [({"per_stage": 0}, "per_stage"), ({"weeks": 5}, "weeks"), ({"tag": "x" * 41}, "tag")],
)
def test_the_matrix_refuses_in_the_one_error_body(lena, query, field):
    response = api_client_for(lena).get(reverse("reports-api:matrix"), query)
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["status"], error["code"]) == (400, "invalid")
    assert list(error["fields"]) == [field]
    assert all(isinstance(message, str) for message in error["fields"][field])


def test_the_published_error_body_names_messages_as_text():
    """What the matrix used to send ({"message": …, "code": …} per error) breaks the schema."""
    fields = _schema()["components"]["schemas"]["Error"]["properties"]["error"]["properties"][
        "fields"
    ]
    assert fields["additionalProperties"] == {"$ref": "#/components/schemas/FieldErrors"}
