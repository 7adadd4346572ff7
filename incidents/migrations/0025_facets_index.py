"""PostgreSQL: one index over what the incident list filters by (tags, stage, discipline,
severity), so that filters which rarely meet are answered from the index.

Each filter alone matches many rows (a quarter of the book for a severity), and the database,
guessing them independent, walked the list's order testing each row: two filters that match
nothing together read the whole book (1.7 s at a million incidents). A multicolumn GIN index
(btree_gin, migration 0024) holds every facet of every row, so the rows that have them all
are found by intersecting the facets' entries. The list looks for such rows this way only
after a bounded walk found too few (common/keyset.py, `_first_filtered`). The tags come from
`tag_list`, the names the incident stores as "a, b, c" (incidents/catalog, `tag_list_text`).
SQLite: nothing to do.
"""

from django.db import migrations

TAGS = "string_to_array(tag_list, ', ')"
POSTGRES_FORWARD = [
    "CREATE EXTENSION IF NOT EXISTS btree_gin",
    f"""CREATE INDEX IF NOT EXISTS incidents_incident_facets
        ON incidents_incident USING gin (({TAGS}), stage, discipline, severity)""",
]
POSTGRES_BACKWARD = ["DROP INDEX IF EXISTS incidents_incident_facets"]


def _run(statements):
    def run(apps, schema_editor):
        if schema_editor.connection.vendor == "postgresql":
            for statement in statements:
                schema_editor.execute(statement)

    return run


class Migration(migrations.Migration):
    dependencies = [("incidents", "0024_search_indexes_by_recency")]

    operations = [migrations.RunPython(_run(POSTGRES_FORWARD), _run(POSTGRES_BACKWARD))]
