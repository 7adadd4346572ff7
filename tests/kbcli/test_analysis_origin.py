"""What `kb` sends with a tail: its key, and where the failure was caught; shown and counted."""

from datetime import timedelta

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from common.weeks import week_last_completed
from incidents.models import Analysis
from reports.services import report_week_build
from tests.reports.conftest import analysis, local

pytestmark = pytest.mark.django_db

LIST = reverse("incidents-api:analysis-list")
TAIL = "slurmstepd: error: *** JOB 4242 ON gpu-07 CANCELLED AT 2026-11-30T03:12:44 DUE TO TIME LIMIT ***\n"
CAUGHT = {
    "log": TAIL,
    "source": "kb-run",
    "command": "python train.py --hf-token hf_abcdefghijklmnopqrstuvwxyz0123",
    "exit_status": 137,
    "host": "gpu-07",
    "cwd": "/work/asr",
    "job_id": "4242",
}


@pytest.fixture
def api(alice):
    client = APIClient()
    client.force_authenticate(alice)
    return client


def test_it_stores_where_a_failure_was_caught_with_secrets_redacted(api, alice_client):
    body = api.post(LIST, CAUGHT, format="json").json()
    assert (body["source"], body["exit_status"], body["host"], body["job_id"]) == (
        "kb-run",
        137,
        "gpu-07",
        "4242",
    )
    assert "hf_abcdefghij" not in body["command"] and body["redactions"] >= 1
    page = alice_client.get(reverse("incidents:analysis-detail", args=[body["id"]])).content
    assert b'id="origin"' in page and b"gpu-07" in page and b"137" in page


def test_a_pasted_tail_shows_no_origin(api, alice_client):
    body = api.post(LIST, {"log": TAIL}, format="json").json()
    assert body["source"] == "api" and body["exit_status"] is None
    page = alice_client.get(reverse("incidents:analysis-detail", args=[body["id"]])).content
    assert b'id="origin"' not in page


def test_the_list_filters_by_origin_and_host(api):
    api.post(LIST, CAUGHT, format="json")
    api.post(LIST, {**CAUGHT, "source": "kb-watch", "host": "gpu-08"}, format="json")
    api.post(LIST, {"log": TAIL}, format="json")
    assert len(api.get(LIST, {"source": "kb-run"}).json()["results"]) == 1
    assert api.get(LIST, {"host": "gpu-08"}).json()["results"][0]["source"] == "kb-watch"


def test_a_key_sent_again_returns_the_analysis_it_made(api, bob):
    first = api.post(LIST, {**CAUGHT, "key": "k-0123456789"}, format="json").json()
    again = api.post(LIST, {**CAUGHT, "key": "k-0123456789"}, format="json")
    assert again.status_code == 202 and again.json()["id"] == first["id"]
    other = APIClient()
    other.force_authenticate(bob)  # a key is the sender's own: bob's is another analysis
    assert (
        other.post(LIST, {**CAUGHT, "key": "k-0123456789"}, format="json").json()["id"]
        != first["id"]
    )
    assert Analysis.objects.count() == 2


def test_the_weekly_report_counts_failed_jobs_caught_by_stage(alice_client):
    week = week_last_completed()
    for stage, source in [
        ("train", "kb-run"),
        ("train", "kb-watch"),
        ("data", "kb-watch"),
        ("train", "web"),
    ]:
        row = analysis(when=local(week + timedelta(days=1)), stage=stage)
        Analysis.objects.filter(pk=row.pk).update(source=source)
    report = report_week_build(week_start=week)
    assert report.data["caught"] == {"count": 3, "explained": 0, "stages": {"train": 2, "data": 1}}
    page = alice_client.get(
        reverse("reports:weekly-detail", kwargs={"week": week})
    ).content.decode()
    assert "Failed jobs caught automatically" in page
