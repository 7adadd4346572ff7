"""The starter knowledge base loads idempotently and never overwrites a person's edit."""

import pytest
from django.core.management import call_command

from incidents.catalog import load_catalog
from incidents.models import Incident, Signature
from incidents.seeding import catalog_seed
from incidents.services import incident_update

pytestmark = pytest.mark.django_db

SLUGS = {entry.slug for entry in load_catalog()}


def _snapshot():
    incidents = list(Incident.objects.order_by("slug").values())
    signatures = list(Signature.objects.order_by("catalog_key").values())
    history = Incident.history.count() + Signature.history.count()
    return incidents, signatures, history


def test_it_ships_every_catalog_slug_with_signatures(catalog):
    assert set(Incident.objects.values_list("slug", flat=True)) == SLUGS
    assert catalog.created == len(SLUGS)
    assert not catalog.signatures_refused
    for incident in Incident.objects.all():
        assert incident.signatures.exists(), incident.slug


def test_it_changes_nothing_when_run_twice(catalog):
    before = _snapshot()
    again = catalog_seed(language="en")
    assert (again.created, again.updated, again.signatures_created) == (0, 0, 0)
    assert again.unchanged == len(SLUGS)
    assert _snapshot() == before


def test_it_never_overwrites_an_incident_a_user_edited(catalog, lena):
    incident = Incident.objects.get(slug="disk-full")
    incident_update(incident=incident, data={"remedy": "our own cleanup script"}, actor=lena)
    result = catalog_seed(language="en")
    incident.refresh_from_db()
    assert incident.remedy == "our own cleanup script"
    assert result.kept_edited == ["disk-full"]


def test_it_keeps_a_signature_a_lead_disabled(catalog):
    signature = Signature.objects.filter(incident__slug="gpu-oom").first()
    Signature.objects.filter(pk=signature.pk).update(enabled=False)
    catalog_seed(language="en")
    signature.refresh_from_db()
    assert not signature.enabled
    assert Signature.objects.filter(catalog_key=signature.catalog_key).count() == 1


def test_it_writes_incidents_in_the_site_language_with_the_other_as_translation(db):
    catalog_seed(language="zh-hans")
    incident = Incident.objects.get(slug="gpu-oom")
    assert incident.language == "zh-hans"
    assert any("\u4e00" <= ch <= "\u9fff" for ch in incident.root_cause)
    assert incident.text("en").translated
    assert incident.text("en").root_cause.isascii()


def test_the_command_reports_what_it_did(db, capsys):
    call_command("seed_catalog")
    call_command("seed_catalog")
    out = capsys.readouterr().out
    assert f"0 created, 0 updated, {len(SLUGS)} unchanged" in out
