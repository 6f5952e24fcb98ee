"""Postgres: keep the search vector in a stored generated column (GIN-indexed), so ranking reads
it instead of re-parsing every matching item's text. Not part of Django's model state on purpose:
SQLite has no tsvector (it uses the FTS5 table of migration 0002)."""

from __future__ import annotations

from django.db import migrations

POSTGRES_FORWARDS = [
    "DROP INDEX IF EXISTS memory_item_fts",
    """ALTER TABLE memory_memoryitem ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
        to_tsvector('english'::regconfig,
            coalesce("text", '') || ' ' || coalesce("key", '') || ' ' || coalesce("value", ''))
    ) STORED""",
    "CREATE INDEX memory_item_search_vector ON memory_memoryitem USING gin (search_vector)",
]
POSTGRES_BACKWARDS = [
    "DROP INDEX IF EXISTS memory_item_search_vector",
    "ALTER TABLE memory_memoryitem DROP COLUMN IF EXISTS search_vector",
    """CREATE INDEX memory_item_fts ON memory_memoryitem USING gin (to_tsvector('english'::regconfig,
        COALESCE("text", '') || ' ' || COALESCE("key", '') || ' ' || COALESCE("value", '')))""",
]


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in POSTGRES_FORWARDS:
            schema_editor.execute(statement)


def backwards(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        for statement in POSTGRES_BACKWARDS:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("memory", "0002_full_text_search")]

    operations = [migrations.RunPython(forwards, backwards)]
