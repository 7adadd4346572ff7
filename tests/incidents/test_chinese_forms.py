"""In Chinese, every form posts back what it showed: dates stay dates."""

import datetime

import pytest
from django.urls import reverse

from incidents.models import Incident, Recurrence
from tests.factories import IncidentFactory
from tests.html_forms import as_posted

pytestmark = pytest.mark.django_db


@pytest.fixture
def chinese(alice_client):
    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    return alice_client


@pytest.fixture
def dated(alice):
    return IncidentFactory(
        slug="dated",
        reporter=alice,
        occurred_on=datetime.date(2026, 11, 20),
        resolved_on=datetime.date(2026, 11, 30),
    )


def test_an_edit_saved_in_chinese_keeps_the_dates(chinese, dated):
    url = reverse("incidents:incident-edit", args=["dated"])
    page = chinese.get(url).content.decode()
    assert 'value="2026-11-20"' in page and 'value="2026-11-30"' in page
    data = as_posted(page, "incident-form")
    assert (data["occurred_on"], data["resolved_on"]) == ("2026-11-20", "2026-11-30")

    response = chinese.post(url, {**data, "severity": "high"})
    assert response.status_code == 302, response.content.decode()[-1500:]
    dated.refresh_from_db()
    assert dated.severity == "high"
    assert (dated.occurred_on, dated.resolved_on) == (
        datetime.date(2026, 11, 20),
        datetime.date(2026, 11, 30),
    )


def test_it_happened_again_can_be_submitted_in_chinese(chinese, dated):
    page = chinese.get(reverse("incidents:incident-detail", args=["dated"])).content.decode()
    data = as_posted(page, "recurrence-form")
    assert data["occurred_on"]  # today, as a browser can read it
    response = chinese.post(reverse("incidents:recurrence-create", args=["dated"]), data)
    assert response.status_code == 302
    assert Recurrence.objects.filter(incident=dated).count() == 1
    assert Incident.objects.get(slug="dated").recurrence_count == 1


def test_the_incident_list_filters_by_dates_in_chinese(chinese, dated):
    page = chinese.get(
        reverse("incidents:incident-list"), {"occurred_after": "2026-11-01"}
    ).content.decode()
    assert 'value="2026-11-01"' in page
    assert "dated" in page
