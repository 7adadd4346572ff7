"""The knowledge state names the last change behind its token, so a process can bring its
compiled index up to date with the changes after its own instead of reading the whole book."""

from django.db import migrations, models
from django.db.models import Max


def mark_the_last_change(apps, schema_editor):
    KnowledgeChange = apps.get_model("incidents", "KnowledgeChange")
    KnowledgeState = apps.get_model("incidents", "KnowledgeState")
    last = KnowledgeChange.objects.aggregate(last=Max("pk"))["last"] or 0
    KnowledgeState.objects.filter(pk=1).update(last_change=last)


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0021_signature_stale_index"),
    ]

    operations = [
        migrations.AddField(
            model_name="knowledgestate",
            name="last_change",
            field=models.BigIntegerField(default=0),
        ),
        migrations.AddField(
            model_name="knowledgechange",
            name="token",
            field=models.CharField(default="", max_length=32),
        ),
        migrations.RunPython(mark_the_last_change, migrations.RunPython.noop),
    ]
