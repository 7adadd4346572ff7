"""What once answered 500 now answers a clear 4xx in the API's error body, or a sane page."""

from __future__ import annotations

import datetime
import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from incidents import services
from incidents.models import Incident
from reports.models import WeeklyReport
from tests.security.conftest import api_client_for
from tests.security.forms import runbook_edit_form

pytestmark = pytest.mark.django_db


def _nested(depth: int) -> str:
    return '{"title": ' + "[" * depth + "]" * depth + "}"


@pytest.mark.parametrize(
    "url",
    [
        reverse("incidents-api:incident-list"),
        reverse("incidents-api:signature-list"),
        reverse("incidents-api:recurrence-list"),
        reverse("incidents-api:analysis-list"),
        reverse("runbooks-api:checklist-run-list"),
        "/api/v1/incidents/alice-incident/",
    ],
)
def test_json_nested_a_thousand_deep_gets_a_400_with_the_error_body(lena, world, url):
    api = api_client_for(lena)
    for method in ("post", "patch"):
        response = getattr(api, method)(url, _nested(1000), content_type="application/json")
        assert response.status_code in (400, 405), (method, response.status_code)
        assert response.json()["error"]["status"] == response.status_code
    response = api.post(url, _nested(1000), content_type="application/json")
    if response.status_code == 400:
        assert "nested too deep" in response.json()["error"]["message"]


def test_an_unexpected_error_under_the_api_answers_in_the_error_body(alice, monkeypatch):
    from incidents.api import views

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(views.IncidentViewSet, "list", broken)
    client = Client(raise_request_exception=False)
    client.force_login(alice)
    response = client.get(reverse("incidents-api:incident-list"))
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "server_error"
    assert "a bug" not in response.content.decode()  # nothing of the error leaks


@pytest.mark.parametrize("week", ["0001-W13", "0001-W01", "0999-W10", "1999-W52", "2101-W01"])
def test_weeks_outside_the_years_of_reports_are_not_found_not_500(lena_client, week):
    for url in (
        f"/reports/weekly/{week}/",
        f"/api/v1/reports/weekly/{week}/",
    ):
        assert lena_client.get(url).status_code == 404, url
    assert lena_client.put(f"/api/v1/reports/weekly/{week}/build/").status_code == 404


def test_a_stored_report_of_an_odd_year_cannot_break_the_lists(lena_client, lena):
    from django.utils import timezone

    for monday in (datetime.date(1, 3, 26), datetime.date(999, 3, 8)):
        WeeklyReport.objects.create(week_start=monday, data={}, built_at=timezone.now())
    assert lena_client.get(reverse("reports:weekly-list")).status_code == 200
    response = api_client_for(lena).get(reverse("reports-api:weekly-list"))
    assert response.status_code == 200
    assert "0001-W13" in [row["week"] for row in response.json()["results"]]


@pytest.mark.parametrize("gap", ["²", "٣", "1e3", "-1", "9" * 40, ""])
def test_a_draft_from_a_gap_that_is_no_number_is_a_plain_form(alice_client, gap):
    response = alice_client.get(reverse("incidents:incident-create"), {"gap": gap})
    assert response.status_code == 200


def test_a_runbook_edit_without_its_steps_is_refused_in_words(lena_client, runbooks):
    from runbooks.models import Runbook

    runbook = Runbook.objects.first()
    form = {
        key: value
        for key, value in runbook_edit_form(runbook).items()
        if not key.startswith("steps-")
    }
    response = lena_client.post(reverse("runbooks:runbook-edit", args=[runbook.slug]), form)
    assert response.status_code == 400
    assert "ManagementForm" in response.content.decode() or "missing" in response.content.decode()
    runbook.refresh_from_db()
    assert runbook.steps  # nothing stored was lost


@pytest.mark.django_db(transaction=True)
def test_two_filings_of_one_title_at_once_both_land_with_their_own_slugs(alice):
    data = {
        "title": "Double submit",
        "symptom": "RuntimeError: the same form twice",
        "root_cause": "A double click.",
        "remedy": "none",
        "discipline": "validate-first",
        "stage": "train",
    }
    start = threading.Barrier(2)
    outcomes: list[object] = []

    def file() -> None:
        try:
            start.wait(10)
            outcomes.append(services.incident_create(data=data, reporter=alice, language="en").slug)
        except Exception as error:  # the test reports it
            outcomes.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=file) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(map(str, outcomes)) == ["double-submit", "double-submit-2"], outcomes
    assert Incident.objects.filter(slug__startswith="double-submit").count() == 2


@pytest.mark.django_db(transaction=True)
def test_two_filings_of_one_chosen_slug_at_once_give_one_incident_and_one_clear_refusal(alice):
    from django.core.exceptions import ValidationError

    data = {
        "title": "Chosen",
        "symptom": "RuntimeError: a chosen slug",
        "root_cause": "A double click.",
        "remedy": "none",
        "discipline": "validate-first",
        "stage": "train",
    }
    start = threading.Barrier(2)
    outcomes: list[object] = []

    def file() -> None:
        try:
            start.wait(10)
            incident = services.incident_create(
                data=data, reporter=alice, language="en", slug="chosen"
            )
            outcomes.append(incident.slug)
        except ValidationError as error:
            outcomes.append(error.message_dict["slug"][0])
        finally:
            connection.close()

    threads = [threading.Thread(target=file) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(outcomes) == ["An incident with this slug already exists.", "chosen"]


def test_a_refusal_is_a_page_of_the_site_with_its_reason_in_the_readers_language(alice, lena):
    from tests.factories import IncidentFactory

    IncidentFactory(slug="lenas", reporter=lena)
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(alice)

    response = client.get(reverse("incidents:incident-edit", args=["lenas"]))

    assert response.status_code == 403
    page = response.content.decode()
    assert "只有报告人或负责人可以编辑这条事故。" in page
    assert 'name="viewport"' in page
    assert "事故知识库" in page


def test_a_form_sent_without_its_token_is_refused_on_a_page_in_the_readers_language(alice):
    client = Client(enforce_csrf_checks=True, HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(alice)

    response = client.post(reverse("incidents:incident-create"), {"title": "x"})

    assert response.status_code == 403
    page = response.content.decode()
    assert "表单已过期，或者来自别的网站。请刷新页面后再提交一次。" in page
    assert 'name="viewport"' in page
