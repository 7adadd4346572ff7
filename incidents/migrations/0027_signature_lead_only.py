from django.db import migrations, models

FIELD = models.BooleanField(
    default=False,
    help_text=(
        "The line has several usual causes: a match ranks this incident but never makes it "
        "the answer (e.g. a bare shape error)."
    ),
    verbose_name="a lead only",
)


def add_column(apps, schema_editor):
    """ALTER TABLE … ADD COLUMN on both databases: Django would rebuild the table on SQLite,
    and rebuilding it re-creates the stale-signatures index with NULLS FIRST, which SQLite
    refuses (migration 0021)."""
    schema_editor.execute(
        'ALTER TABLE "incidents_signature" ADD COLUMN "lead_only" boolean NOT NULL DEFAULT false'
    )


def drop_column(apps, schema_editor):
    schema_editor.execute('ALTER TABLE "incidents_signature" DROP COLUMN "lead_only"')


class Migration(migrations.Migration):
    dependencies = [
        ("incidents", "0026_facet_pairs_index"),
    ]

    operations = [
        migrations.AddField(model_name="historicalsignature", name="lead_only", field=FIELD),
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.AddField(model_name="signature", name="lead_only", field=FIELD),
            ],
            database_operations=[migrations.RunPython(add_column, drop_column)],
        ),
    ]
