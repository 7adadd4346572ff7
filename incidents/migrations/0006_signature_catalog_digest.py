"""Signatures the seed wrote remember what it wrote, so a later catalog can update them.

Signatures shipped with the catalog that nobody has changed since (one history row: their
creation) get the digest of their current content; any other is treated as a person's edit.
"""

import hashlib
import json

from django.db import migrations, models


def _digest(pattern: str, note: str, examples: str) -> str:
    # incidents.seeding.signature_digest as of this migration
    payload = json.dumps([pattern, note, examples], ensure_ascii=False)
    return hashlib.sha256(payload.encode()).hexdigest()


def remember_what_the_seed_wrote(apps, schema_editor):
    Signature = apps.get_model("incidents", "Signature")
    HistoricalSignature = apps.get_model("incidents", "HistoricalSignature")
    shipped = Signature.objects.exclude(catalog_key="")
    edited = set(
        HistoricalSignature.objects.filter(id__in=shipped.values("pk"))
        .values("id")
        .annotate(rows=models.Count("history_id"))
        .filter(rows__gt=1)
        .values_list("id", flat=True)
    )
    for signature in shipped.exclude(pk__in=edited):
        signature.catalog_digest = _digest(signature.pattern, signature.note, signature.examples)
        signature.save(update_fields=["catalog_digest"])


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0005_queued_at_optional"),
    ]

    operations = [
        migrations.AddField(
            model_name="historicalsignature",
            name="catalog_digest",
            field=models.CharField(blank=True, editable=False, max_length=64),
        ),
        migrations.AddField(
            model_name="signature",
            name="catalog_digest",
            field=models.CharField(blank=True, editable=False, max_length=64),
        ),
        migrations.RunPython(remember_what_the_seed_wrote, migrations.RunPython.noop),
    ]
