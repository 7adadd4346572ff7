"""Upgrading an install with history counts it into the new rollups at once."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.migrating import migrate_to

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("back_to_the_latest_schema"),
]

BEFORE = ("incidents", "0016_search_words")
AFTER = ("incidents", "0017_matrix_and_report_rollups")


def test_an_existing_history_is_counted_by_the_migration():
    apps = migrate_to(BEFORE)
    Incident = apps.get_model("incidents", "Incident")
    Analysis = apps.get_model("incidents", "Analysis")
    Recurrence = apps.get_model("incidents", "Recurrence")
    fields = {"title": "X", "symptom": "s", "root_cause": "r", "remedy": "m"}
    data = Incident.objects.create(slug="x", discipline="reconcile", stage="data", **fields)
    Incident.objects.create(slug="y", discipline="reconcile", stage="train", **fields)
    today = timezone.localdate(timezone=timezone.get_default_timezone())
    Recurrence.objects.create(incident=data, occurred_on=today - timedelta(days=3))
    Analysis.objects.create(text="t", status="done", confident=True, top_incident=data)
    Analysis.objects.create(text="t", status="failed")

    apps = migrate_to(AFTER)
    IncidentDay = apps.get_model("incidents", "IncidentDay")
    WindowTotal = apps.get_model("incidents", "WindowTotal")
    AnalysisDay = apps.get_model("incidents", "AnalysisDay")
    IncidentCell = apps.get_model("incidents", "IncidentCell")
    assert sorted(IncidentDay.objects.values_list("day", "recurrences", "analyses")) == [
        (today - timedelta(days=3), 1, 0),
        (today, 0, 1),
    ]
    assert set(WindowTotal.objects.values_list("weeks", "happened")) == {
        (weeks, 2) for weeks in (4, 8, 12, 26, 52)
    }
    assert AnalysisDay.objects.values_list("submitted", "explained", "failed").get() == (2, 1, 1)
    assert sorted(IncidentCell.objects.values_list("stage", "incidents")) == [
        ("data", 1),
        ("train", 1),
    ]


def test_an_existing_history_is_counted_into_the_tags_cells():
    apps = migrate_to(("incidents", "0022_knowledge_state_change_marks"))
    Incident = apps.get_model("incidents", "Incident")
    Tag = apps.get_model("incidents", "Tag")
    IncidentDay = apps.get_model("incidents", "IncidentDay")
    fields = {"title": "X", "symptom": "s", "root_cause": "r", "remedy": "m"}
    kaldi, gpu = Tag.objects.create(name="kaldi"), Tag.objects.create(name="gpu")
    data = Incident.objects.create(slug="x", discipline="reconcile", stage="data", **fields)
    train = Incident.objects.create(slug="y", discipline="tiny-sample", stage="train", **fields)
    data.tags.add(kaldi, gpu)
    train.tags.add(gpu)
    today = timezone.localdate(timezone=timezone.get_default_timezone())
    IncidentDay.objects.create(incident=data, day=today, recurrences=2, analyses=1)
    IncidentDay.objects.create(incident=train, day=today, recurrences=1)

    apps = migrate_to(("incidents", "0023_tag_rollups"))
    TagCellDay = apps.get_model("incidents", "TagCellDay")
    TagCell = apps.get_model("incidents", "TagCell")
    assert sorted(TagCellDay.objects.values_list("tag__name", "stage", "happened")) == [
        ("gpu", "data", 3),
        ("gpu", "train", 1),
        ("kaldi", "data", 3),
    ]
    assert sorted(TagCell.objects.values_list("tag__name", "discipline", "incidents")) == [
        ("gpu", "reconcile", 1),
        ("gpu", "tiny-sample", 1),
        ("kaldi", "reconcile", 1),
    ]
