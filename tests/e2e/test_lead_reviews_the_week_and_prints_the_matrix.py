"""A lead reads the quick-reference matrix and last week's report on a realistic history,
marks the week reviewed with a note, and prints the matrix on one or two A4 sheets."""

import io
import re

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from common.weeks import week_label_of_date, week_last_completed
from tests.e2e.conftest import ARTIFACTS

pytestmark = pytest.mark.django_db(transaction=True)

NOTE = "Disk-full failures doubled: add the df check to the data-prep template before Friday."
# A page object in the PDF; "/Type /Pages" is the page tree, which the lookahead leaves out.
PDF_PAGE = re.compile(rb"/Type\s*/Page(?![A-Za-z])")


@pytest.fixture
def history(catalog):
    """A few weeks of demo history, and last week's report built as on Monday morning."""
    out = io.StringIO()
    call_command(
        "generate_demo_data",
        "--seed",
        "1",
        "--incidents",
        "40",
        "--weeks",
        "4",
        "--no-reports",
        stdout=out,
    )
    last_week = week_label_of_date(week_last_completed())
    call_command("build_weekly_report", "--week", last_week, stdout=out)
    return last_week


def test_a_lead_reviews_last_week_and_prints_the_matrix(visit, history, lena):
    page = visit.page
    visit.sign_in("lena")
    expect(page.locator(".usernav .who")).to_contain_text("lead")

    page.locator('.mainnav a[href="/matrix/"]').click()
    expect(page.locator("h1")).to_have_text("Quick-reference matrix")
    matrix = page.locator("table.matrix")
    expect(matrix).to_be_visible()
    expect(matrix.locator("tbody.m-block")).to_have_count(4)  # build, data, train, serve
    expect(matrix.locator("a.m-title").first).to_be_visible()
    expect(page.locator("table.heatmap")).to_be_visible()

    page.locator('.mainnav a[href="/reports/weekly/"]').click()
    expect(page.locator("h1")).to_have_text("Weekly reports")
    page.get_by_role("link", name=history, exact=True).click()
    expect(page.locator("h1")).to_have_text(f"Weekly report {history}")
    review = page.locator("section.review-box")
    expect(review.locator(".badge")).to_have_text("not reviewed")
    expect(page.locator("img.trend-chart")).to_be_visible()
    page.wait_for_function(
        "() => { const img = document.querySelector('img.trend-chart');"
        " return img.complete && img.naturalWidth > 0; }"
    )

    review.locator("#id_notes").fill(NOTE)
    review.get_by_role("button", name="Mark reviewed").click()
    expect(page.locator(".messages")).to_contain_text("Marked reviewed.")
    expect(review.locator(".badge.ok")).to_have_text("reviewed")
    expect(review).to_contain_text("by lena")
    expect(review.locator("blockquote.review-notes")).to_have_text(NOTE)

    page.locator('.mainnav a[href="/matrix/"]').click()
    expect(page.locator("table.matrix")).to_be_visible()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pdf = page.pdf(path=ARTIFACTS / "matrix.pdf", prefer_css_page_size=True, print_background=True)
    pages = len(PDF_PAGE.findall(pdf))
    assert 1 <= pages <= 2, f"the matrix printed on {pages} pages"
    visit.finish("lead-reviews-the-week-and-prints-the-matrix")
