"""The shipped runbooks load idempotently and never overwrite a lead's edit."""

import dataclasses

import pytest
from django.core.management import call_command

from runbooks import catalog
from runbooks.catalog import load_runbooks
from runbooks.models import Calculator, Kind, Runbook
from runbooks.seeding import runbook_catalog_seed
from runbooks.services import runbook_update

pytestmark = pytest.mark.django_db

SLUGS = [entry.slug for entry in load_runbooks()]


def _snapshot():
    return list(Runbook.objects.order_by("slug").values()), Runbook.history.count()


def test_it_ships_every_catalog_runbook_in_catalog_order(runbooks):
    assert list(Runbook.objects.values_list("slug", flat=True)) == SLUGS
    assert runbooks.created == len(SLUGS)
    weekly = Runbook.objects.get(slug="weekly-rhythm")
    assert weekly.kind == Kind.RHYTHM
    assert weekly.steps[0]["command"].startswith("df -BG .")
    assert set(weekly.steps[0]) == {"text", "command", "expected"}


def test_the_model_choices_match_the_catalog_vocabulary():
    assert set(Kind.values) == set(catalog.KINDS)
    assert set(Calculator.values) == set(catalog.CALCULATORS)


def test_it_changes_nothing_when_run_twice(runbooks):
    before = _snapshot()
    again = runbook_catalog_seed(language="en")
    assert (again.created, again.updated, again.kept_edited) == (0, 0, [])
    assert again.unchanged == len(SLUGS)
    assert _snapshot() == before


def test_a_leads_edit_survives_reseeding(runbooks, lena):
    runbook = Runbook.objects.get(slug="checklist-reconcile")
    runbook_update(
        runbook=runbook, data={"summary": "Our own reconcile routine."}, language="en", actor=lena
    )
    result = runbook_catalog_seed(language="en")
    runbook.refresh_from_db()
    assert runbook.summary == "Our own reconcile routine."
    assert runbook.catalog_digest == ""
    assert result.kept_edited == ["checklist-reconcile"]
    assert result.unchanged == len(SLUGS) - 1


def test_an_untouched_runbook_follows_a_catalog_change(runbooks, monkeypatch):
    changed = []
    for entry in load_runbooks():
        if entry.slug == "log-levels":
            en = dataclasses.replace(entry.texts["en"], title="Reading logs by level, revised")
            entry = dataclasses.replace(entry, texts={**entry.texts, "en": en})
        changed.append(entry)
    monkeypatch.setattr("runbooks.seeding.load_runbooks", lambda: changed)
    result = runbook_catalog_seed(language="en")
    assert (result.created, result.updated) == (0, 1)
    runbook = Runbook.objects.get(slug="log-levels")
    assert runbook.title == "Reading logs by level, revised"
    assert runbook.history.first().history_change_reason == "catalog update"


def test_it_writes_runbooks_in_the_site_language_with_the_other_as_translation(db):
    runbook_catalog_seed(language="zh-hans")
    runbook = Runbook.objects.get(slug="diagnose-train")
    assert runbook.language == "zh-hans"
    assert runbook.title == "训练失败排查"
    english = runbook.text("en")
    assert english.translated
    assert english.title == "Diagnose a failed training stage"
    assert [s.command for s in english.steps] == [s["command"] for s in runbook.steps]


def test_the_command_reports_what_it_did(db, capsys):
    call_command("seed_runbooks")
    call_command("seed_runbooks")
    out = capsys.readouterr().out
    assert f"0 created, 0 updated, {len(SLUGS)} unchanged, 0 kept as edited" in out


def test_the_command_refuses_an_unknown_language(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="Unknown language"):
        call_command("seed_runbooks", language="fr")
