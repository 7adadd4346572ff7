"""Full-text search over incidents that works for English and Chinese on both databases.

SQLite: an FTS5 table with the trigram tokenizer over search_document, kept in sync by
triggers. PostgreSQL: pg_trgm with a GIN index, which serves LIKE '%term%'. Neither splits
on whitespace, so Chinese text (no spaces) is found as reliably as English.
"""

from django.db import migrations

SQLITE_FORWARD = [
    """CREATE VIRTUAL TABLE incidents_incident_fts USING fts5(
        search_document, content='incidents_incident', content_rowid='id', tokenize='trigram')""",
    """CREATE TRIGGER incidents_incident_fts_ai AFTER INSERT ON incidents_incident BEGIN
        INSERT INTO incidents_incident_fts(rowid, search_document)
        VALUES (new.id, new.search_document);
    END""",
    """CREATE TRIGGER incidents_incident_fts_ad AFTER DELETE ON incidents_incident BEGIN
        INSERT INTO incidents_incident_fts(incidents_incident_fts, rowid, search_document)
        VALUES ('delete', old.id, old.search_document);
    END""",
    """CREATE TRIGGER incidents_incident_fts_au AFTER UPDATE OF search_document
        ON incidents_incident BEGIN
        INSERT INTO incidents_incident_fts(incidents_incident_fts, rowid, search_document)
        VALUES ('delete', old.id, old.search_document);
        INSERT INTO incidents_incident_fts(rowid, search_document)
        VALUES (new.id, new.search_document);
    END""",
    "INSERT INTO incidents_incident_fts(incidents_incident_fts) VALUES ('rebuild')",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS incidents_incident_fts_au",
    "DROP TRIGGER IF EXISTS incidents_incident_fts_ad",
    "DROP TRIGGER IF EXISTS incidents_incident_fts_ai",
    "DROP TABLE IF EXISTS incidents_incident_fts",
]
POSTGRES_FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS pg_trgm",
    """CREATE INDEX IF NOT EXISTS incidents_incident_search_trgm
        ON incidents_incident USING gin (search_document gin_trgm_ops)""",
]
POSTGRES_BACKWARD = ["DROP INDEX IF EXISTS incidents_incident_search_trgm"]


def _run(statements_by_vendor):
    def run(apps, schema_editor):
        for statement in statements_by_vendor.get(schema_editor.connection.vendor, []):
            schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("incidents", "0001_initial")]

    operations = [
        migrations.RunPython(
            _run({"sqlite": SQLITE_FORWARD, "postgresql": POSTGRES_FORWARD}),
            _run({"sqlite": SQLITE_BACKWARD, "postgresql": POSTGRES_BACKWARD}),
        ),
    ]
