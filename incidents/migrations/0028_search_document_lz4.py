"""PostgreSQL: the search document is compressed with LZ4 instead of pglz.

A search reads every candidate's document twice (whether it holds the terms, then how often),
and each read decompresses it: at a few KB per incident that decompression was most of the
database's time for a search of a small book (4.3 ms for two terms over 108 incidents; 1.8 ms
with LZ4). Only values written from now on are compressed this way: an incident's document is
rewritten whenever it is saved. Servers built without LZ4, or older than PostgreSQL 14, keep
pglz. SQLite: nothing to do.
"""

from django.db import DatabaseError, migrations, transaction

COLUMN = "ALTER TABLE incidents_incident ALTER COLUMN search_document SET COMPRESSION {}"


def _compression(method):
    def run(apps, schema_editor):
        connection = schema_editor.connection
        if connection.vendor != "postgresql" or connection.pg_version < 140000:
            return
        try:
            with transaction.atomic(using=connection.alias):
                schema_editor.execute(COLUMN.format(method))
        except DatabaseError:
            pass  # a server without LZ4: pglz, as before

    return run


class Migration(migrations.Migration):
    dependencies = [("incidents", "0027_signature_lead_only")]

    operations = [migrations.RunPython(_compression("lz4"), _compression("pglz"))]
