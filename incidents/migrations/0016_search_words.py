"""A word index for search terms under 3 characters, which the trigram indexes cannot serve.

The words (incidents/search_words.py) are made in Python and stored in search_words.
PostgreSQL: a GIN index on the tsvector made straight from those words (no text-search
parser in between, so it holds exactly what Python made). SQLite: an FTS5 table with the
unicode61 tokenizer over search_words, with prefix indexes for one- and two-letter starts,
kept in sync by triggers as the trigram table is.
"""

from django.db import migrations, models

from incidents.search_words import search_words

SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE incidents_incident_words USING fts5(
        search_words, content='incidents_incident', content_rowid='id',
        tokenize='unicode61', prefix='1 2')""",
    """CREATE TRIGGER incidents_incident_words_ai AFTER INSERT ON incidents_incident BEGIN
        INSERT INTO incidents_incident_words(rowid, search_words)
        VALUES (new.id, new.search_words);
    END""",
    """CREATE TRIGGER incidents_incident_words_ad AFTER DELETE ON incidents_incident BEGIN
        INSERT INTO incidents_incident_words(incidents_incident_words, rowid, search_words)
        VALUES ('delete', old.id, old.search_words);
    END""",
    """CREATE TRIGGER incidents_incident_words_au AFTER UPDATE OF search_words
        ON incidents_incident BEGIN
        INSERT INTO incidents_incident_words(incidents_incident_words, rowid, search_words)
        VALUES ('delete', old.id, old.search_words);
        INSERT INTO incidents_incident_words(rowid, search_words)
        VALUES (new.id, new.search_words);
    END""",
    "INSERT INTO incidents_incident_words(incidents_incident_words) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS incidents_incident_words_au",
    "DROP TRIGGER IF EXISTS incidents_incident_words_ad",
    "DROP TRIGGER IF EXISTS incidents_incident_words_ai",
    "DROP TABLE IF EXISTS incidents_incident_words",
]
# The expression must be written the same way in IncidentQuerySet.search for the index to serve.
POSTGRES_FORWARD = [
    """CREATE INDEX IF NOT EXISTS incidents_incident_search_words
        ON incidents_incident USING gin (array_to_tsvector(string_to_array(search_words, ' ')))""",
]
POSTGRES_BACKWARD = ["DROP INDEX IF EXISTS incidents_incident_search_words"]
BATCH = 2000


def fill(apps, schema_editor):
    Incident = apps.get_model("incidents", "Incident")
    objects = Incident.objects.using(schema_editor.connection.alias)
    rows = objects.order_by("pk")
    last = 0
    while batch := list(rows.filter(pk__gt=last).only("pk", "search_document")[:BATCH]):
        for incident in batch:
            incident.search_words = search_words(incident.search_document)
        objects.bulk_update(batch, ["search_words"])
        last = batch[-1].pk


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("incidents", "0015_webhook")]

    operations = [
        # ALTER TABLE rather than AddField: on SQLite, AddField of a column with a default
        # remakes the table, and dropping the old one drops the triggers of migration 0002.
        migrations.SeparateDatabaseAndState(
            database_operations=[
                migrations.RunSQL(
                    "ALTER TABLE incidents_incident "
                    "ADD COLUMN search_words text NOT NULL DEFAULT ''",
                    "ALTER TABLE incidents_incident DROP COLUMN search_words",
                )
            ],
            state_operations=[
                migrations.AddField(
                    model_name="incident",
                    name="search_words",
                    field=models.TextField(blank=True, editable=False),
                )
            ],
        ),
        migrations.RunPython(fill, migrations.RunPython.noop),
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        ),
    ]
