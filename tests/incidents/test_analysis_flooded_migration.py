"""Upgrading an install marks the analyses it has whose stored report found a warning flood, so
the weekly report of a past week still lists their floods."""

import pytest
from django.utils import timezone

from incidents.models import Analysis
from tests.migrating import migrate_to

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("back_to_the_latest_schema"),
]

BEFORE = ("incidents", "0019_report_week_indexes")


def test_analyses_stored_before_the_upgrade_are_marked_flooded_from_their_reports():
    apps = migrate_to(BEFORE)
    Old = apps.get_model("incidents", "Analysis")
    now = timezone.now()
    for name, report in [
        ("flood", {"groups": [{"flood": True}], "floods": [0]}),
        ("quiet", {"groups": [{"flood": False}], "floods": []}),
        ("older shape", {"groups": []}),
        ("none", None),
    ]:
        Old.objects.create(text=name, status="done", report=report, created_at=now)

    migrate_to(None)

    flooded = Analysis.objects.filter(flooded=True).values_list("text", flat=True)
    assert list(flooded) == ["flood"]
