"""generate_demo_data: a deterministic history that leaves the catalog's text alone."""

from collections import Counter
from datetime import date

import pytest
from django.core.management import call_command

from incidents.models import TEXT_FIELDS, Analysis, Feedback, Incident, KnowledgeGap, Recurrence
from reports.demo import demo_clear, demo_generate
from reports.models import WeeklyReport
from tests.factories import IncidentFactory

pytestmark = pytest.mark.django_db
TODAY = date(2026, 11, 18)


def _catalog_text():
    return {
        incident.slug: (
            tuple(getattr(incident, name) for name in TEXT_FIELDS),
            incident.translations,
            incident.updated_at,
        )
        for incident in Incident.objects.exclude(slug__startswith="demo-")
    }


def _fingerprint():
    return (
        list(
            Incident.objects.filter(slug__startswith="demo-")
            .order_by("slug")
            .values_list("slug", "title", "stage", "discipline", "created_at")
        ),
        sorted(Recurrence.objects.values_list("incident__slug", "occurred_on")),
        sorted(Analysis.objects.values_list("created_at", "confident", "key_template", "status")),
        Feedback.objects.count(),
    )


def test_it_fills_weeks_of_history_deterministically(catalog):
    before = _catalog_text()
    result = demo_generate(incidents=60, weeks=6, seed=3, today=TODAY)
    first = _fingerprint()

    assert (result.incidents, result.analyses) == (60, 420)
    assert result.recurrences >= 180 and result.feedback > 0 and result.gaps > 0
    assert Analysis.objects.filter(confident=True).exists()
    assert Analysis.objects.filter(confident=False, status="done").exclude(key_template="").exists()
    stages = set(Incident.objects.filter(slug__startswith="demo-").values_list("stage", flat=True))
    assert stages == {"build", "data", "train", "serve"}
    assert KnowledgeGap.objects.filter(analysis_count__gt=0).exists()
    assert _catalog_text() == before  # text, translations, not even touched

    demo_generate(incidents=60, weeks=6, seed=3, today=TODAY)  # again: the same, not more
    assert _fingerprint() == first
    assert _catalog_text() == before
    demo_generate(incidents=60, weeks=6, seed=4, today=TODAY)
    assert _fingerprint() != first
    assert Incident.objects.filter(slug__startswith="demo-").count() == 60


def test_recurrence_counters_match_the_recurrences(catalog):
    demo_generate(incidents=40, weeks=4, seed=1, today=TODAY)
    for incident in Incident.objects.all():
        assert incident.recurrence_count == incident.recurrences.count()


def test_the_command_builds_the_weekly_reports_of_the_history(catalog, capsys):
    call_command("generate_demo_data", "--incidents", "30", "--weeks", "3", "--today", "2026-11-18")
    assert WeeklyReport.objects.count() == 3
    latest = WeeklyReport.objects.first()
    assert latest.data["analyses"]["submitted"] > 0
    assert "added 30 incidents" in capsys.readouterr().out


def test_an_incident_a_person_filed_gets_no_demo_history(catalog, alice):
    filed = IncidentFactory(slug="our-own", reporter=alice)
    demo_generate(incidents=40, weeks=4, seed=1, today=TODAY)
    assert not Recurrence.objects.filter(incident=filed).exists()
    assert not Analysis.objects.filter(top_incident=filed).exists()
    shipped = Recurrence.objects.exclude(incident__slug__startswith="demo-")
    assert shipped.exists()  # the shipped incidents recur

    demo_clear()
    assert not Incident.objects.filter(slug__startswith="demo-").exists()
    assert not Recurrence.objects.exists() and not Analysis.objects.exists()
    assert Incident.objects.filter(slug="our-own").exists()


def test_demo_incidents_are_coherent_and_rarely_share_a_title(db):
    demo_generate(incidents=300, weeks=4, seed=7, today=TODAY, suggestions=False)
    demo = Incident.objects.filter(slug__startswith="demo-")
    for title, environment, remedy in demo.values_list("title", "environment", "remedy"):
        text = " ".join((title, environment, remedy))
        if "npu-node" in text:
            assert "gpu-node" not in text and "nvidia-smi" not in text, text
            assert "CUDA out of memory" not in text, text
        if "gpu-node" in text:
            assert "Ascend" not in text and "npu-smi" not in text and "NPU out" not in text, text
    for title, remedy in demo.filter(title__contains="extension").values_list("title", "remedy"):
        library = title.split()[0]
        assert f"import {library};" in remedy, (title, remedy)
    repeats = Counter(demo.values_list("title", flat=True))
    assert max(repeats.values()) <= 2, repeats.most_common(3)
