"""The weekly report pages: list, detail, review (leads only), build on demand, CSV, chart."""

import csv
import io
from datetime import date, timedelta

import pytest
from django.urls import reverse

from common.weeks import week_current, week_label_of_date
from reports.models import WeeklyReport
from reports.services import report_week_build
from tests.reports.conftest import analysis, incident, local, recurrence

pytestmark = pytest.mark.django_db


def _url(name, week):
    return reverse(f"reports:{name}", kwargs={"week": week})


@pytest.fixture
def built(week, catalog):
    from incidents.models import Incident

    oom = Incident.objects.get(slug="gpu-oom")
    recurrence(oom, week + timedelta(days=2))
    analysis(when=local(week + timedelta(days=2)), top=oom)
    analysis(when=local(week + timedelta(days=3)), template="E<*> lost heartbeat")
    return report_week_build(week_start=week)


def test_the_detail_page_shows_the_snapshot(alice_client, built, week):
    response = alice_client.get(_url("weekly-detail", week))
    page = response.content.decode()
    assert response.status_code == 200
    assert f"Weekly report {week_label_of_date(week)}" in page
    assert "50%" in page  # one of two analyses explained
    assert "Accelerator (GPU/NPU) out of memory" in page
    assert "E&lt;*&gt; lost heartbeat" in page
    assert "needs attention most" in page
    assert _url("weekly-chart", week) in page
    assert "Mark reviewed" not in page  # alice is no lead


def test_the_detail_page_says_whether_the_weekly_rhythm_was_run(
    alice_client, alice, built, week, runbooks
):
    from runbooks.models import Runbook
    from runbooks.services import checklist_run_start, checklist_run_update

    page = alice_client.get(_url("weekly-detail", week)).content.decode()
    assert "Weekly rhythm run" in page and "<strong>no</strong>" in page

    rhythm = Runbook.objects.get(slug="weekly-rhythm")
    run = checklist_run_start(runbook=rhythm, user=alice, now=local(week + timedelta(days=4)))
    page = alice_client.get(_url("weekly-detail", week)).content.decode()
    assert "<strong>yes</strong>" in page and "not finished" in page

    finished = local(week + timedelta(days=4), 18)
    checklist_run_update(run=run, ticked=[0], step_notes={}, note="", finish=True, now=finished)
    page = alice_client.get(_url("weekly-detail", week)).content.decode()
    assert "<strong>yes</strong>" in page and "not finished" not in page and "alice" in page


def test_an_impossible_week_in_the_url_is_a_404(alice_client):
    assert alice_client.get("/reports/weekly/2026-W54/").status_code == 404
    assert reverse("reports:weekly-detail", kwargs={"week": date(2026, 11, 23)}) == (
        "/reports/weekly/2026-W48/"
    )


def test_the_detail_page_follows_the_ui_language(alice_client, built, week):
    alice_client.post(reverse("language-set"), {"language": "zh-hans", "next": "/"})
    page = alice_client.get(_url("weekly-detail", week)).content.decode()
    assert "加速卡（GPU/NPU）显存不足" in page


def test_a_lead_marks_a_week_reviewed_with_notes(lena_client, lena, built, week):
    response = lena_client.post(_url("weekly-review", week), {"notes": "Gaps go to bob."})
    assert response.status_code == 302
    built.refresh_from_db()
    assert (built.reviewed_by, built.review_notes) == (lena, "Gaps go to bob.")
    assert built.reviewed_at is not None
    listing = lena_client.get(reverse("reports:weekly-list")).content.decode()
    assert "reviewed</span>" in listing and "lena" in listing
    assert "Gaps go to bob." in lena_client.get(_url("weekly-detail", week)).content.decode()


def test_an_engineer_may_not_mark_a_week_reviewed(alice_client, built, week):
    response = alice_client.post(_url("weekly-review", week), {"notes": "Looks fine."})
    assert response.status_code == 403
    built.refresh_from_db()
    assert not built.reviewed


def test_the_list_shows_which_weeks_are_reviewed(lena_client, lena, week):
    from reports.services import report_week_review

    report_week_review(report=report_week_build(week_start=week), user=lena, notes="")
    report_week_build(week_start=week - timedelta(weeks=1))
    page = lena_client.get(reverse("reports:weekly-list")).content.decode()
    assert page.count("badge ok") == 1 and page.count("not reviewed") == 1
    assert page.index(week_label_of_date(week)) < page.index(
        week_label_of_date(week - timedelta(weeks=1))
    )


def test_a_missing_week_offers_leads_to_build_it(alice_client, lena_client, week):
    assert "Build it now" in lena_client.get(reverse("reports:weekly-list")).content.decode()
    missing = alice_client.get(_url("weekly-detail", week))
    assert missing.status_code == 404 and "Build it now" not in missing.content.decode()
    assert alice_client.post(_url("weekly-build", week)).status_code == 403
    assert lena_client.get(_url("weekly-detail", week)).status_code == 404

    response = lena_client.post(_url("weekly-build", week))

    assert response.status_code == 302 and response["Location"] == _url("weekly-detail", week)
    assert WeeklyReport.objects.filter(week_start=week).exists()
    future = week_current() + timedelta(weeks=1)
    assert lena_client.get(_url("weekly-detail", future)).status_code == 404
    assert lena_client.post(_url("weekly-build", future)).status_code == 302  # refused, told why
    assert not WeeklyReport.objects.filter(week_start=future).exists()


def test_the_csv_export_has_the_rows_of_the_week(alice_client, built, week):
    response = alice_client.get(_url("weekly-csv", week))
    assert (
        response["Content-Disposition"]
        == f'attachment; filename="weekly-report-{week_label_of_date(week)}.csv"'
    )
    rows = list(csv.reader(io.StringIO(response.content.decode("utf-8-sig"))))
    assert rows[0] == ["Section", "Key", "Label", "Count", "Previous", "Change", "Detail"]
    by_key = {(row[0], row[1]): row for row in rows[1:]}
    assert by_key["analyses", "explained_share"][3] == "50"
    assert by_key["stage", "train"][3:6] == ["1", "0", "1"]
    assert by_key["top_recurring", "gpu-oom"][3] == "1"
    assert by_key["gap", ""][2:4] == ["E<*> lost heartbeat", "1"]  # a tail with no gap row
    assert sum(1 for row in rows if row[0] == "trend") == 12


def test_the_csv_export_quotes_semicolons_and_neutralises_formulas(alice_client, week, catalog):
    analysis(when=local(week + timedelta(days=3)), template="=cmd|' /C calc'!A0; E<*> died")
    report_week_build(week_start=week)
    body = alice_client.get(_url("weekly-csv", week)).content.decode("utf-8-sig")
    assert "\"'=cmd|' /C calc'!A0; E<*> died\"" in body


def test_the_chart_is_an_svg_without_any_script(alice_client, built, week):
    response = alice_client.get(_url("weekly-chart", week))
    svg = response.content.decode()
    assert response["Content-Type"] == "image/svg+xml"
    assert svg.startswith("<svg") and "<script" not in svg and "kozea.github.io" not in svg
    assert "W" + week_label_of_date(week).split("-W")[1] in svg
    assert "default-src 'none'" in response["Content-Security-Policy"]


@pytest.mark.parametrize("n", [2, 30])
def test_the_pages_are_a_fixed_number_of_queries(alice_client, django_assert_num_queries, week, n):
    for i in range(n):
        made = incident(created=local(week + timedelta(days=i % 7)))
        recurrence(made, week + timedelta(days=1))
        analysis(when=local(week + timedelta(days=2)), top=made)
        report_week_build(week_start=week - timedelta(weeks=i))
    # session, user, the report (+ reviewer), the weekly rhythm runs
    with django_assert_num_queries(4):
        assert alice_client.get(_url("weekly-detail", week)).status_code == 200
    # session, user, count, page of reports (+ reviewers)
    with django_assert_num_queries(4):
        assert alice_client.get(reverse("reports:weekly-list")).status_code == 200
