"""Upgrading an install keeps what leads changed and lets the catalog update the rest."""

import pytest

from incidents.models import Signature
from incidents.seeding import catalog_seed, signature_digest
from incidents.services import signature_update
from tests.migrating import migrate_to

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("back_to_the_latest_schema"),
    pytest.mark.slow,  # migrates back and forth
]

BEFORE = ("incidents", "0005_queued_at_optional")
AFTER = ("incidents", "0006_signature_catalog_digest")


def test_signatures_nobody_changed_remember_what_the_seed_wrote(lena):
    catalog_seed(language="en")
    untouched, edited = Signature.objects.filter(incident__slug="disk-full")[:2]
    signature_update(signature=edited, data={"note": "our own note"}, actor=lena)

    migrate_to(BEFORE)
    migrate_to(AFTER)

    # Read through the fields the schema has at that migration (later ones add columns).
    digests = dict(
        Signature.objects.filter(pk__in=[untouched.pk, edited.pk])
        .only("catalog_digest")
        .values_list("pk", "catalog_digest")
    )
    assert digests[untouched.pk] == signature_digest(
        {"pattern": untouched.pattern, "note": untouched.note, "examples": untouched.examples}
    )
    assert digests[edited.pk] == ""
