"""POST a tail → 202 with its URL; GET → status and report; feedback; gaps."""

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from incidents.models import Analysis
from incidents.services import analysis_run

pytestmark = pytest.mark.django_db

LIST = reverse("incidents-api:analysis-list")
TAIL = "slurmstepd: error: *** JOB 4242 ON gpu-07 CANCELLED AT 2026-11-30T03:12:44 DUE TO TIME LIMIT ***\n"


@pytest.fixture
def api(alice):
    client = APIClient()
    client.force_authenticate(alice)
    return client


def test_it_accepts_a_tail_with_202_and_its_url(api, catalog):
    response = api.post(LIST, {"log": TAIL, "log_path": "logs/slurm-4242.out"}, format="json")
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "queued"
    assert response["Location"] == body["url"]
    assert body["page"].endswith(f"/analyses/{body['id']}/")


def test_it_reports_status_then_the_result(api, catalog):
    created = api.post(LIST, {"log": TAIL}, format="json").json()
    assert api.get(created["url"]).json()["status"] == "queued"
    analysis_run(analysis_id=created["id"])
    done = api.get(created["url"]).json()
    assert done["status"] == "done"
    assert done["suggestions"][0]["slug"] == "queue-job-died"
    assert done["suggestions"][0]["evidence"][0]["line"] == 1
    assert set(done["report"]) >= {"stage", "levels", "groups", "groups_total", "suggestions"}


def test_it_accepts_a_multipart_file(api, catalog):
    from django.core.files.uploadedfile import SimpleUploadedFile

    upload = SimpleUploadedFile("slurm.out", TAIL.encode())
    response = api.post(LIST, {"file": upload}, format="multipart")
    assert response.status_code == 202


@pytest.mark.parametrize(
    ("body", "field", "message"),
    [
        ({}, "log", "Send a log tail"),
        ({"log": "  \n"}, "log", "Send a log tail"),
        ({"log": TAIL, "log_path": "p" * 600}, "log_path", "no more than 500"),
    ],
)
def test_it_refuses_bad_tails_with_a_clear_error(api, body, field, message):
    response = api.post(LIST, body, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert message in " ".join(error["fields"][field])
    assert not Analysis.objects.exists()


def test_feedback_through_the_api(api, catalog):
    created = api.post(LIST, {"log": TAIL}, format="json").json()
    analysis_run(analysis_id=created["id"])
    url = reverse("incidents-api:analysis-feedback", args=[created["id"]])
    response = api.post(url, {"incident": "queue-job-died", "verdict": "fixed"}, format="json")
    assert response.status_code == 200
    wrong = api.post(url, {"incident": "nan-loss", "verdict": "fixed"}, format="json")
    assert wrong.status_code == 400


def test_gaps_through_the_api(api, catalog):
    created = api.post(
        LIST, {"log": "FATAL: widget spline reticulation failed\n"}, format="json"
    ).json()
    analysis_run(analysis_id=created["id"])
    gaps = api.get(reverse("incidents-api:gap-list")).json()["results"]
    assert gaps[0]["analysis_count"] == 1
    assert "reticulation" in gaps[0]["example_line"]
    assert gaps[0]["draft"].endswith(f"/gaps/{gaps[0]['id']}/draft/")


def test_anonymous_callers_are_told_to_authenticate(client):
    response = client.post(LIST, {"log": TAIL}, content_type="application/json")
    assert response.status_code == 401
    assert response["WWW-Authenticate"] == "Token"
    assert response.json()["error"]["code"] == "not_authenticated"
    assert not Analysis.objects.exists()
