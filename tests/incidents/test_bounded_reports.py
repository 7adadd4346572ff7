"""Whatever is pasted, what is stored and shown stays small: a report keeps the most severe
and most frequent groups and says how many more there were; lists carry no reports."""

import json
import random
import string

import pytest
from django.urls import reverse
from rest_framework.test import APIClient

from incidents.models import Analysis
from incidents.services import analysis_request, analysis_run

pytestmark = [pytest.mark.django_db, pytest.mark.slow]  # each test analyses 2 MiB
PAGE_BUDGET = 200_000  # bytes


def distinct_warnings(size: int = 2 * 1024 * 1024 - 4096) -> str:
    """A tail at the cap made of warnings that share no template: every line its own group."""
    rng = random.Random(7)
    lines, total = [], 0
    while total < size:
        words = " ".join(
            "".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 9))) for _ in range(6)
        )
        lines.append(f"WARNING {words} could not settle")
        total += len(lines[-1]) + 1
    return "\n".join([*lines, "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB"])


@pytest.fixture
def huge(alice, catalog) -> Analysis:
    analysis = analysis_request(data=distinct_warnings(), user=alice)
    analysis_run(analysis_id=analysis.pk)
    return Analysis.objects.get(pk=analysis.pk)


def test_a_report_keeps_the_telling_groups_and_counts_the_rest(huge):
    report = huge.report
    assert report["groups_total"] > 25_000
    assert len(report["groups"]) == 100
    assert report["groups"][-1]["level"] == "ERROR"  # the most severe is always kept
    assert "line_groups" not in report
    assert len(json.dumps(report)) < PAGE_BUDGET
    assert huge.top_incident.slug == "gpu-oom"


def test_the_page_stays_small_and_says_what_it_left_out(huge, alice_client):
    response = alice_client.get(huge.get_absolute_url())
    page = response.content.decode()
    assert len(response.content) < PAGE_BUDGET
    assert 'id="groups-not-shown"' in page
    assert "more groups of lines are not shown" in page


def test_lists_carry_summaries_not_reports(huge, alice):
    for _ in range(4):  # five huge analyses on one page
        Analysis.objects.create(
            submitted_by=alice, text=huge.text, report=huge.report, status="done"
        )
    api = APIClient()
    api.force_authenticate(alice)
    listed = api.get(reverse("incidents-api:analysis-list"))
    assert len(listed.content) < PAGE_BUDGET
    first = listed.json()["results"][0]
    assert "report" not in first and "suggestions" not in first
    assert {"id", "status", "stage", "confident", "top_incident", "url"} <= set(first)
    detail = api.get(first["url"])
    assert len(detail.content) < PAGE_BUDGET
    assert detail.json()["report"]["groups_total"] > 25_000
