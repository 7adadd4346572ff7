"""The reports API: the matrix and the weekly reports, read by anyone, reviewed by leads."""

from datetime import timedelta

import pytest
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from common.weeks import week_label_of_date
from incidents.models import Incident
from reports.services import report_week_build
from tests.reports.conftest import recurrence

pytestmark = pytest.mark.django_db


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token " + Token.objects.get_or_create(user=user)[0].key)
    return client


def test_the_matrix_endpoint_takes_the_page_filters(alice, catalog):
    from django.utils import timezone

    recurrence(Incident.objects.get(slug="gpu-oom"), timezone.localdate())
    body = _client(alice).get(reverse("reports-api:matrix"), {"weeks": 4, "per_stage": 2}).json()
    assert body["weeks"] == 4
    train = next(row for row in body["stages"] if row["stage"] == "train")
    assert [entry["slug"] for entry in train["entries"]][:1] == ["gpu-oom"]
    assert len(train["entries"]) == 2
    assert train["entries"][0]["command"].startswith("nvidia-smi")
    assert len(body["heatmap"]) == 4 and len(body["heatmap"][0]["cells"]) == 4
    bad = _client(alice).get(reverse("reports-api:matrix"), {"weeks": 3})
    assert bad.status_code == 400


def test_weekly_reports_are_listed_and_read_by_week(alice, week):
    report_week_build(week_start=week)
    report_week_build(week_start=week - timedelta(weeks=1))
    client = _client(alice)
    listing = client.get(reverse("reports-api:weekly-list")).json()
    assert [item["week"] for item in listing["results"]] == [
        week_label_of_date(week),
        week_label_of_date(week - timedelta(weeks=1)),
    ]
    assert "data" not in listing["results"][0]
    detail = client.get(listing["results"][0]["url"]).json()
    assert detail["data"]["week"] == week_label_of_date(week)
    assert detail["reviewed"] is False
    assert (
        client.get(
            f"/api/v1/reports/weekly/{week_label_of_date(week + timedelta(weeks=4))}/"
        ).status_code
        == 404
    )


def test_only_a_lead_reviews_or_builds_through_the_api(alice, lena, week):
    report_week_build(week_start=week)
    review = reverse("reports-api:weekly-review", kwargs={"week": week})
    assert _client(alice).post(review, {"notes": "x"}).status_code == 403
    response = _client(lena).post(review, {"notes": "Checked."}, format="json")
    assert response.status_code == 200
    assert (response.json()["reviewed_by"], response.json()["review_notes"]) == ("lena", "Checked.")
    build = reverse("reports-api:weekly-build", kwargs={"week": week - timedelta(weeks=2)})
    assert _client(alice).post(build).status_code == 403
    assert _client(lena).post(build).json()["week"] == week_label_of_date(week - timedelta(weeks=2))


def test_the_schema_documents_the_report_endpoints(alice_client):
    schema = alice_client.get(reverse("api-schema"), HTTP_ACCEPT="application/json").json()
    assert {"/api/v1/matrix/", "/api/v1/reports/weekly/{week}/"} <= set(schema["paths"])
