"""A recurrence confirmed on an analysis page stores which analysis, not a sentence in the
language of whoever clicked: the page words it in the reader's language. Notes that were only
that sentence (in English or Chinese) become the fact, where the analysis still exists."""

import re

import django.db.models.deletion
from django.db import migrations, models

CONFIRMED = re.compile(r"^(?:Confirmed by analysis #(\d+)|由分析 #(\d+) 确认)$")


def notes_to_facts(apps, schema_editor):
    Recurrence = apps.get_model("incidents", "Recurrence")
    Analysis = apps.get_model("incidents", "Analysis")
    for recurrence in Recurrence.objects.filter(note__contains="#").only("pk", "note"):
        found = CONFIRMED.match(recurrence.note.strip())
        if not found:
            continue
        pk = int(found.group(1) or found.group(2))
        if Analysis.objects.filter(pk=pk).exists():  # else the sentence is all that is left
            Recurrence.objects.filter(pk=recurrence.pk).update(analysis_id=pk, note="")


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0011_signature_unless"),
    ]

    operations = [
        migrations.AddField(
            model_name="recurrence",
            name="analysis",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="incidents.analysis",
                verbose_name="confirmed by analysis",
            ),
        ),
        migrations.RunPython(notes_to_facts, migrations.RunPython.noop),
    ]
