"""Every page of our own, on a 390 × 844 phone and a 1280 px desk, in English and Chinese:
nothing wider than the screen, axe-core finds no WCAG 2.1 A/AA violation, and the page audit
(tests/e2e/audit.js: what axe cannot judge, such as the skip link) finds nothing."""

import io
from pathlib import Path

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.core.management import call_command
from playwright.sync_api import expect

from common.weeks import week_label_of_date, week_last_completed
from incidents.models import Analysis, Incident, KnowledgeGap
from incidents.services import analysis_request, analysis_run
from tests.e2e.conftest import SCREENSHOTS, STEP_TIMEOUT_MS, Visit

pytestmark = pytest.mark.django_db(transaction=True)

AUDIT = (Path(__file__).parent / "audit.js").read_text()
AXE = Axe()
WCAG_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}


def _axe_violations(page) -> list[str]:
    """axe-core's WCAG 2.1 A/AA violations on the page: rule, impact and where."""
    results = AXE.run(page, options=WCAG_AA)
    return [
        f"axe {v['id']} ({v['impact']}): {node['target']}"
        for v in results.response["violations"]
        for node in v["nodes"][:3]
    ]


PHONE = {"width": 390, "height": 844}
NARROWEST_MATRIX_CELL = """() => Math.min(...[...document.querySelectorAll(
  "table.matrix td:not(.num)")].map((cell) => cell.getBoundingClientRect().width))"""
# Every line of the remedy is one line on screen: the <pre> never wraps inside a token.
NO_WRAP_IN_REMEDY = """() => {
  const pre = document.querySelector("pre.remedy");
  const lines = pre.textContent.split("\\n").length;
  const height = parseFloat(getComputedStyle(pre).lineHeight);
  const inner = pre.scrollHeight - parseFloat(getComputedStyle(pre).paddingTop)
    - parseFloat(getComputedStyle(pre).paddingBottom);
  return Math.round(inner / height) <= lines;
}"""
DESK = {"width": 1280, "height": 800}
OOM_TAIL = (
    "[rank0]:     loss.backward()\n"
    "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
    "GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free.\n"
)


@pytest.fixture
def site(catalog, runbooks, lena):
    """A few weeks of demo history, last week's report, an analysis and a knowledge gap."""
    out = io.StringIO()
    call_command(
        "generate_demo_data",
        "--seed",
        "3",
        "--incidents",
        "20",
        "--weeks",
        "2",
        "--no-reports",
        stdout=out,
    )
    week = week_label_of_date(week_last_completed())
    call_command("build_weekly_report", "--week", week, stdout=out)
    # The incident whose remedy has the longest line: its analysis shows that remedy whole.
    widest = max(
        Incident.objects.all(), key=lambda i: max(len(line) for line in i.remedy.splitlines())
    )
    # The incident whose title holds the longest word (an error name such as
    # CUDA_ERROR_INVALID_VALUE): a heading must wrap it, not widen the page.
    long_word = max(Incident.objects.all(), key=lambda i: max(map(len, i.title.split())))
    analyses = []
    for text in (
        OOM_TAIL,
        "ERROR: frobnicator quux exploded at stage 7 with code 0x2f\n",
        widest.symptom,
    ):
        analysis = analysis_request(data=text, user=lena, log_path="")
        analysis_run(analysis_id=analysis.pk)
        analyses.append(Analysis.objects.get(pk=analysis.pk))
    gap = KnowledgeGap.objects.filter(explained_at__isnull=True).first()
    return [
        "/analyses/new/",
        analyses[0].get_absolute_url(),
        analyses[1].get_absolute_url(),
        analyses[2].get_absolute_url(),
        "/incidents/",
        "/incidents/?q=out+of+memory",
        "/incidents/gpu-oom/",
        f"/incidents/{long_word.slug}/",
        "/incidents/gpu-oom/edit/",
        "/incidents/new/",
        f"/gaps/{gap.pk}/draft/" if gap else "/gaps/",
        "/gaps/",
        "/matrix/",
        "/reports/weekly/",
        f"/reports/weekly/{week}/",
        "/runbooks/",
        "/runbooks/diagnose-train/",
        "/runbooks/runs/",
        "/account/",
        "/api/v1/docs/",
    ]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
@pytest.mark.parametrize("screen", ["phone", "desk"])
def test_every_page_fits_and_passes_the_audit(browser, live_server, site, screen, language):
    viewport = PHONE if screen == "phone" else DESK
    context = browser.new_context(viewport=viewport, locale="en-US", is_mobile=screen == "phone")
    context.set_default_timeout(STEP_TIMEOUT_MS)
    try:
        visit = Visit(context.new_page(), live_server.url)
        visit.go("/login/")
        problems = visit.page.evaluate(AUDIT) + _axe_violations(visit.page)
        found = {"/login/": problems} if problems else {}
        visit.sign_in("lena")
        if screen == "phone":  # a compact header, the menu folded behind one button
            assert visit.page.locator("header.topbar").bounding_box()["height"] <= 64
            expect(visit.page.locator(".mainnav")).to_be_hidden()
            visit.page.locator("details.menu > summary").click()
        if language != "en":
            visit.page.locator(f'button[name="language"][value="{language}"]').click()
            expect(visit.page.locator("html")).to_have_attribute("lang", language)
        for path in site:
            visit.go(path)
            if path == "/api/v1/docs/":
                expect(visit.page.locator(".swagger-ui .info")).to_be_visible()
                problems = [p for p in visit.page.evaluate(AUDIT) if p.startswith("html-has-lang")]
            else:  # the API docs page is Swagger UI's, not ours: only its language is judged
                problems = visit.page.evaluate(AUDIT) + _axe_violations(visit.page)
            if path == "/matrix/":  # its columns keep their width: the box scrolls instead
                narrowest = visit.page.evaluate(NARROWEST_MATRIX_CELL)
                assert narrowest >= 120, f"a matrix cell is {narrowest} px wide"
            if problems:
                found[path] = problems
        visit.go("/incidents/gpu-oom/")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        visit.page.screenshot(path=SCREENSHOTS / f"{screen}-{language}-incident.png")
        assert visit.page.evaluate(NO_WRAP_IN_REMEDY), "a remedy line wraps"
        assert found == {}, "\n".join(f"{p}: {v}" for p, v in found.items())
        assert visit.problems == [], visit.problems
    finally:
        context.close()
