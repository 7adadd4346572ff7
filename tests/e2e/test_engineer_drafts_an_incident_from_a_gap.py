"""A tail the book cannot explain: the page says so, one click drafts an incident from its
key line, and the knowledge-gaps page lists that line."""

import pytest
from playwright.sync_api import expect

from tests.e2e.conftest import WORKER_TIMEOUT_MS

pytestmark = pytest.mark.django_db(transaction=True)

KEY_LINE = (
    "2026-11-30 09:14:09 ERROR hydra_sweeper.py:203 "
    "Quasar ledger rejected trial 17: checksum drift 0x2f7a on lane 4"
)
UNEXPLAINED_TAIL = f"""\
2026-11-30 09:14:02 INFO sweep.py:51 launching trial 17 of 32 on node gpu-a07
2026-11-30 09:14:03 INFO sweep.py:77 trial 17 params: lr=3e-4 warmup=500 dropout=0.1
{KEY_LINE}
2026-11-30 09:14:09 INFO sweep.py:90 trial 17 marked abandoned
"""


def test_an_unexplained_tail_becomes_a_drafted_incident_and_a_listed_gap(
    visit, analyses, catalog, alice
):
    analyses.start()
    page = visit.page
    visit.sign_in("alice")
    page.locator('.mainnav a[href="/analyses/new/"]').click()
    page.locator("#id_log").fill(UNEXPLAINED_TAIL)
    page.get_by_role("button", name="Analyze", exact=True).click()

    no_match = page.locator("#no-match")
    expect(no_match).to_be_visible(timeout=WORKER_TIMEOUT_MS)
    expect(no_match.locator("h2")).to_have_text("No confident match")
    expect(no_match.locator("pre")).to_have_text(KEY_LINE)
    expect(page.get_by_role("heading", name="Suggested remedies")).to_have_count(0)

    no_match.get_by_role("link", name="Draft an incident from it").click()
    expect(page.locator("h1")).to_have_text("File an incident")
    expect(page.locator("#id_symptom")).to_have_value(KEY_LINE)
    gap_context = page.locator(".gap-context")
    expect(gap_context).to_contain_text("Drafted from a knowledge gap")
    expect(gap_context.locator("pre")).to_contain_text("Quasar ledger rejected trial 17")
    expect(page.locator("input[name=gap]")).to_have_count(1)

    page.locator('.mainnav a[href="/gaps/"]').click()
    expect(page.locator("h1")).to_have_text("Knowledge gaps")
    row = page.locator("table.list tbody tr", has_text="Quasar ledger rejected trial 17")
    expect(row).to_have_count(1)
    expect(row.locator("code")).to_have_text(KEY_LINE)
    expect(row.locator("td.num")).to_have_text("1")
    expect(row.get_by_role("link", name="Draft incident")).to_be_visible()
    visit.finish("engineer-drafts-an-incident-from-a-gap")
