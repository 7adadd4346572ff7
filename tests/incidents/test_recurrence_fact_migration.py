"""Upgrading an install turns stored "Confirmed by analysis #N" sentences into the fact."""

import pytest

from tests.migrating import migrate_to

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("back_to_the_latest_schema"),
]

BEFORE = ("incidents", "0011_signature_unless")
AFTER = ("incidents", "0012_recurrence_confirmed_by_analysis")


def test_confirmation_sentences_in_either_language_become_the_analysis(alice):
    apps = migrate_to(BEFORE)
    Incident = apps.get_model("incidents", "Incident")
    Analysis = apps.get_model("incidents", "Analysis")
    Recurrence = apps.get_model("incidents", "Recurrence")
    incident = Incident.objects.create(
        slug="x",
        title="X",
        symptom="s",
        root_cause="r",
        remedy="m",
        discipline="reconcile",
        stage="train",
    )
    analysis = Analysis.objects.create(text="t")
    notes = {
        "en": f"Confirmed by analysis #{analysis.pk}",
        "zh": f"由分析 #{analysis.pk} 确认",
        "gone": "Confirmed by analysis #99999",
        "own": f"Confirmed by analysis #{analysis.pk} and by the on-call",
    }
    made = {
        key: Recurrence.objects.create(incident=incident, note=note) for key, note in notes.items()
    }

    apps = migrate_to(AFTER)
    Recurrence = apps.get_model("incidents", "Recurrence")
    rows = {key: Recurrence.objects.get(pk=row.pk) for key, row in made.items()}
    assert (rows["en"].analysis_id, rows["en"].note) == (analysis.pk, "")
    assert (rows["zh"].analysis_id, rows["zh"].note) == (analysis.pk, "")
    assert (rows["gone"].analysis_id, rows["gone"].note) == (None, notes["gone"])
    assert (rows["own"].analysis_id, rows["own"].note) == (None, notes["own"])
