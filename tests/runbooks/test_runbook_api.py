"""Read-only API: runbooks by slug with filters, and checklist runs."""

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from runbooks.catalog import load_runbooks
from runbooks.models import Runbook
from runbooks.services import checklist_run_start

pytestmark = pytest.mark.django_db

LIST = reverse("runbooks-api:runbook-list")
CATALOG = load_runbooks()


@pytest.fixture
def api(alice):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.create(user=alice).key)
    return client


def _slugs(response) -> list[str]:
    return [item["slug"] for item in response.json()["results"]]


def test_it_lives_under_api_v1():
    assert LIST == "/api/v1/runbooks/"
    assert (
        reverse("runbooks-api:runbook-detail", args=["weekly-rhythm"])
        == "/api/v1/runbooks/weekly-rhythm/"
    )


def test_it_lists_every_runbook_in_catalog_order(api, runbooks):
    response = api.get(LIST)
    assert response.status_code == 200
    assert _slugs(response) == [entry.slug for entry in CATALOG]


def test_it_reads_one_runbook_by_slug_with_its_steps_and_translation(api, runbooks):
    body = api.get(reverse("runbooks-api:runbook-detail", args=["diagnose-serve"])).json()
    assert body["kind"] == "diagnose" and body["stage"] == "serve"
    assert body["language"] == "en"
    assert body["steps"][0].keys() == {"text", "command", "expected"}
    assert body["translations"]["zh-hans"]["title"] == "解码任务与推理服务故障排查"
    assert body["url"].endswith("/api/v1/runbooks/diagnose-serve/")


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ({"stage": "train"}, {e.slug for e in CATALOG if e.stage == "train"}),
        ({"discipline": "tiny-sample"}, {e.slug for e in CATALOG if e.discipline == "tiny-sample"}),
        ({"kind": "checklist"}, {e.slug for e in CATALOG if e.kind == "checklist"}),
        ({"kind": "diagnose", "stage": "data"}, {"diagnose-data"}),
        ({"calculator": "scaling-efficiency"}, {"multi-node-communication"}),
    ],
)
def test_it_filters_by_stage_discipline_and_kind(api, runbooks, query, expected):
    response = api.get(LIST, query)
    assert set(_slugs(response)) == expected and expected


def test_it_refuses_an_unknown_filter_value_with_the_error_body(api, runbooks):
    response = api.get(LIST, {"stage": "deploy"})
    assert response.status_code == 400
    assert "stage" in response.json()["error"]["fields"]


def test_it_answers_404_for_an_unknown_slug(api, runbooks):
    response = api.get(reverse("runbooks-api:runbook-detail", args=["nope"]))
    assert response.status_code == 404
    assert response.json()["error"]["status"] == 404


@pytest.mark.parametrize("method", ["post", "put", "patch", "delete"])
def test_it_is_read_only_even_for_leads(lena, runbooks, method):
    client = APIClient()
    client.force_authenticate(lena)
    url = (
        LIST if method == "post" else reverse("runbooks-api:runbook-detail", args=["weekly-rhythm"])
    )
    response = getattr(client, method)(url, {"title": "x"}, format="json")
    assert response.status_code == 405
    assert Runbook.objects.get(slug="weekly-rhythm").title == "The weekly rhythm"


def test_it_refuses_anonymous_requests(client, runbooks):
    response = client.get(LIST)
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"


def test_it_lists_checklist_runs_with_filters(api, alice, bob, runbooks):
    rhythm = Runbook.objects.get(slug="weekly-rhythm")
    mine = checklist_run_start(runbook=rhythm, user=alice)
    checklist_run_start(runbook=Runbook.objects.get(slug="checklist-reconcile"), user=bob)
    url = reverse("runbooks-api:checklist-run-list")
    body = api.get(url, {"runbook": "weekly-rhythm"}).json()
    assert [item["id"] for item in body["results"]] == [mine.pk]
    item = body["results"][0]
    assert (item["runbook"], item["started_by"], item["iso_week"], item["finished"]) == (
        "weekly-rhythm",
        "alice",
        mine.iso_week,
        False,
    )
    assert len(api.get(url, {"iso_week": mine.iso_week}).json()["results"]) == 2
    assert api.get(url, {"finished": "true"}).json()["results"] == []
    assert api.post(url, {}, format="json").status_code == 405
