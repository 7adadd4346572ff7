"""Every API answer has the shape its schema publishes: a person who is gone is `null`, never a
missing key; the matrix's bounds are in the schema; its refusals use the one error body."""

from __future__ import annotations

import pytest
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator

from common.api_errors import NO_NULL_CHARACTER
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


@pytest.mark.parametrize(
    ("method", "path", "headers"),
    [
        ("get", "/api/v1/nowhere/", {}),
        ("get", "/api/v1/incidents/no-such-incident/", {}),
        ("delete", "/api/v1/analyses/", {}),
        ("get", "/api/v1/incidents/", {"HTTP_ACCEPT": "application/xml"}),
        ("get", "/api/v1/incidents/?format=xml", {}),
        ("get", "/api/v1/incidents/?page=99", {}),
        ("get", "/api/schema/?format=xml", {}),
        ("get", "/api/v1/reports/weekly/1999-W99/", {}),
    ],
)
def test_every_refusal_under_the_api_is_the_one_error_body(lena, method, path, headers):
    response = getattr(api_client_for(lena), method)(path, **headers)
    assert 400 <= response.status_code < 500, (response.status_code, response.content[:300])
    assert response["Content-Type"].startswith("application/json"), response.content[:300]
    error = response.json()["error"]
    assert error["status"] == response.status_code
    assert set(error) == {"status", "code", "message", "fields"}


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
@pytest.mark.parametrize("debug", [False, True])
def test_a_write_to_a_path_without_its_slash_is_sent_on_with_its_body(
    world, lena, settings, method, debug
):
    """A 301 made clients send a GET instead: a filing came back 200 and was never made."""
    settings.DEBUG = debug
    path = reverse("incidents-api:incident-list").rstrip("/")
    response = getattr(api_client_for(lena), method)(path + "?x=1", {"title": "t"}, format="json")
    assert response.status_code == 308
    assert response["Location"] == path + "/?x=1"


def test_a_read_without_its_slash_is_still_an_ordinary_redirect(lena):
    path = reverse("incidents-api:incident-list").rstrip("/")
    assert api_client_for(lena).get(path).status_code == 301


@pytest.mark.parametrize("size", ["0", "201", "abc", "", "５", "null"])
def test_a_page_size_out_of_its_bounds_is_refused_in_words(lena, size):
    response = api_client_for(lena).get(reverse("incidents-api:incident-list"), {"page_size": size})
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"page_size": ["A whole number from 1 to 200."]}


def test_the_page_size_bounds_are_published():
    operation = _schema()["paths"]["/api/v1/incidents/"]["get"]
    sizes = [p["schema"] for p in operation["parameters"] if p["name"] == "page_size"]
    assert sizes == [{"type": "integer", "minimum": 1, "maximum": 200}]


def test_free_text_query_parameters_say_they_hold_no_null_character():
    schema = SchemaGenerator().get_schema(request=None, public=True)
    free_text = [
        (path, parameter["name"], parameter["schema"])
        for path, operations in schema["paths"].items()
        for operation in operations.values()
        for parameter in operation.get("parameters", [])
        if parameter["in"] == "query"
        and parameter["schema"].get("type") == "string"
        and not {"enum", "format"} & parameter["schema"].keys()
    ]
    assert {name for _, name, _ in free_text} >= {"q", "tag", "cursor"}
    assert all(s.get("pattern") == NO_NULL_CHARACTER for _, _, s in free_text), free_text


def test_a_null_character_in_a_query_is_refused_in_words(alice):
    response = api_client_for(alice).get(reverse("incidents-api:incident-list"), {"tag": "a\0b"})
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"tag": ["Null characters are not allowed."]}
