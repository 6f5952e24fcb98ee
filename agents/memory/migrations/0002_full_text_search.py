"""Full-text search over memory items, per database.

SQLite: an external-content FTS5 table kept in step by triggers. Django rebuilds SQLite tables on
some AlterField migrations, which drops triggers: a later migration that alters MemoryItem must
run these statements again (the retrieval tests fail loudly otherwise).
Postgres: a GIN index on the same ``to_tsvector`` expression that ``agents.memory.search`` queries.
"""

from __future__ import annotations

from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector
from django.db import migrations

SQLITE_FORWARDS = [
    """CREATE VIRTUAL TABLE memory_item_fts USING fts5(
        "text", "key", "value", content='memory_memoryitem', content_rowid='id',
        tokenize='porter unicode61')""",
    """CREATE TRIGGER memory_item_fts_ai AFTER INSERT ON memory_memoryitem BEGIN
        INSERT INTO memory_item_fts(rowid, "text", "key", "value")
        VALUES (new.id, new."text", new."key", new."value"); END""",
    """CREATE TRIGGER memory_item_fts_ad AFTER DELETE ON memory_memoryitem BEGIN
        INSERT INTO memory_item_fts(memory_item_fts, rowid, "text", "key", "value")
        VALUES ('delete', old.id, old."text", old."key", old."value"); END""",
    """CREATE TRIGGER memory_item_fts_au AFTER UPDATE OF "text", "key", "value"
        ON memory_memoryitem BEGIN
        INSERT INTO memory_item_fts(memory_item_fts, rowid, "text", "key", "value")
        VALUES ('delete', old.id, old."text", old."key", old."value");
        INSERT INTO memory_item_fts(rowid, "text", "key", "value")
        VALUES (new.id, new."text", new."key", new."value"); END""",
    "INSERT INTO memory_item_fts(memory_item_fts) VALUES ('rebuild')",
]
SQLITE_BACKWARDS = [
    "DROP TRIGGER IF EXISTS memory_item_fts_ai",
    "DROP TRIGGER IF EXISTS memory_item_fts_ad",
    "DROP TRIGGER IF EXISTS memory_item_fts_au",
    "DROP TABLE IF EXISTS memory_item_fts",
]


def _postgres_index():
    return GinIndex(SearchVector("text", "key", "value", config="english"), name="memory_item_fts")


def forwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        for statement in SQLITE_FORWARDS:
            schema_editor.execute(statement)
    elif vendor == "postgresql":
        schema_editor.add_index(apps.get_model("memory", "MemoryItem"), _postgres_index())


def backwards(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "sqlite":
        for statement in SQLITE_BACKWARDS:
            schema_editor.execute(statement)
    elif vendor == "postgresql":
        schema_editor.remove_index(apps.get_model("memory", "MemoryItem"), _postgres_index())


class Migration(migrations.Migration):
    dependencies = [("memory", "0001_initial")]

    operations = [migrations.RunPython(forwards, backwards)]
