"""The starter knowledge base loads idempotently and never overwrites a person's edit."""

from dataclasses import replace

import pytest
from django.core.management import call_command

from incidents import seeding
from incidents.catalog import CatalogSignature, load_catalog
from incidents.models import Incident, Signature
from incidents.seeding import catalog_seed
from incidents.services import incident_update, signature_delete, signature_update

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


def test_it_keeps_a_signature_a_lead_disabled(catalog, lena):
    signature = Signature.objects.filter(incident__slug="gpu-oom").first()
    signature_update(signature=signature, data={"enabled": False}, actor=lena)
    catalog_seed(language="en")
    signature.refresh_from_db()
    assert not signature.enabled
    assert Signature.objects.filter(catalog_key=signature.catalog_key).count() == 1


def _next_release(monkeypatch, slug: str, change) -> None:
    """The catalog of a later release, in which `change` rewrites the signatures of `slug`."""
    entries = [
        replace(entry, signatures=tuple(change(list(entry.signatures))))
        if entry.slug == slug
        else entry
        for entry in load_catalog()
    ]
    monkeypatch.setattr(seeding, "load_catalog", lambda: entries)


def _first_signature(slug: str) -> Signature:
    return Signature.objects.filter(incident__slug=slug).order_by("catalog_key").first()


def _regroup(pattern: str) -> str:
    return f"(?:{pattern})"


def _sharpen(signatures):
    """The next release rewrites the entry's first signature (same lines, another expression)."""
    first = min(signatures, key=lambda signature: signature.key)
    return [
        replace(signature, pattern=_regroup(signature.pattern)) if signature is first else signature
        for signature in signatures
    ]


def test_a_changed_catalog_signature_reaches_an_install_that_never_touched_it(catalog, monkeypatch):
    shipped = _first_signature("disk-full").pattern
    _next_release(monkeypatch, "disk-full", _sharpen)
    result = catalog_seed(language="en")
    signature = _first_signature("disk-full")
    assert signature.pattern == _regroup(shipped)
    assert result.signatures_updated == 1
    assert signature.history.first().history_change_reason == "catalog update"

    before = _snapshot()
    again = catalog_seed(language="en")
    assert (again.signatures_created, again.signatures_updated) == (0, 0)
    assert _snapshot() == before


def test_a_signature_a_lead_edited_keeps_the_leads_expression(catalog, lena, monkeypatch):
    signature = _first_signature("disk-full")
    own = signature.pattern + "|our team's own wording"
    signature_update(signature=signature, data={"pattern": own}, actor=lena)
    _next_release(monkeypatch, "disk-full", _sharpen)
    result = catalog_seed(language="en")
    signature.refresh_from_db()
    assert signature.pattern == own
    assert result.signatures_kept_edited == [signature.catalog_key]


def test_a_signature_a_lead_deleted_stays_deleted(catalog, monkeypatch):
    signature = _first_signature("disk-full")
    key = signature.catalog_key
    signature_delete(signature=signature)
    _next_release(monkeypatch, "disk-full", _sharpen)
    catalog_seed(language="en")
    assert not Signature.objects.filter(catalog_key=key).exists()


def test_a_signature_the_catalog_dropped_is_disabled_not_deleted(catalog, monkeypatch):
    signature = _first_signature("disk-full")
    _next_release(
        monkeypatch,
        "disk-full",
        lambda signatures: [s for s in signatures if f"disk-full:{s.key}" != signature.catalog_key],
    )
    result = catalog_seed(language="en")
    signature.refresh_from_db()
    assert not signature.enabled
    assert result.signatures_retired == 1


def test_a_new_catalog_signature_arrives_even_for_an_incident_a_user_edited(
    catalog, lena, monkeypatch
):
    incident = Incident.objects.get(slug="disk-full")
    incident_update(incident=incident, data={"remedy": "our own cleanup script"}, actor=lena)
    extra = CatalogSignature(
        key="no-room",
        pattern=r"No room left on target volume",
        note="",
        examples=("rsync: No room left on target volume",),
    )
    _next_release(monkeypatch, "disk-full", lambda signatures: [*signatures, extra])
    result = catalog_seed(language="en")
    assert result.kept_edited == ["disk-full"]
    assert result.signatures_created == 1
    assert Signature.objects.get(catalog_key="disk-full:no-room").pattern == extra.pattern


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


def test_a_signature_changed_behind_the_products_back_counts_as_edited(catalog, monkeypatch):
    signature = _first_signature("disk-full")
    Signature.objects.filter(pk=signature.pk).update(note="changed in the database")
    _next_release(monkeypatch, "disk-full", _sharpen)
    result = catalog_seed(language="en")
    signature.refresh_from_db()
    assert signature.note == "changed in the database"
    assert result.signatures_kept_edited == [signature.catalog_key]


def test_reseeding_reads_the_signatures_and_their_history_once(catalog, django_assert_num_queries):
    # One lookup per incident, every shipped signature and every deletion at once, and the
    # savepoint (opened and released) its transaction makes inside the test's.
    with django_assert_num_queries(len(SLUGS) + 2 + 2):
        catalog_seed(language="en")


def test_a_catalog_signature_turned_lead_only_reaches_an_install_and_stays_as_seeded(
    catalog, monkeypatch
):
    shipped = Signature.objects.get(catalog_key="config-dimension-mismatch:torch-shape-errors")
    assert shipped.lead_only  # the shipped catalog says a bare shape error is a lead
    assert not _first_signature("disk-full").lead_only
    disk_full = Signature.objects.filter(incident__slug="disk-full", enabled=True)
    turning = disk_full.filter(lead_only=False).count()

    _next_release(
        monkeypatch,
        "disk-full",
        lambda signatures: [replace(s, lead_only=True) for s in signatures],
    )
    result = catalog_seed(language="en")
    assert result.signatures_updated == turning > 0
    assert all(signature.lead_only for signature in disk_full)

    again = catalog_seed(language="en")
    assert (again.signatures_updated, again.signatures_kept_edited) == (0, [])
