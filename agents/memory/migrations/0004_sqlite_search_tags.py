"""SQLite: index only active items, with "tags" naming whose they are, so a search for some
people in one workspace is narrowed inside FTS5 instead of by filtering every match.

Tags: ``p<owner>`` personal memory, ``w<workspace>x<owner>`` personal memory in a workspace,
``t<workspace>`` team memory. A regular (not external-content) FTS5 table: it keeps its own copy
of the short texts, so triggers can delete by rowid and "rebuild" needs no extra column.
"""

from __future__ import annotations

from django.db import migrations

TAGS = """CASE {row}.scope
    WHEN 'personal' THEN 'p' || {row}.owner_id
    WHEN 'workspace' THEN 'w' || {row}.workspace_id || 'x' || {row}.owner_id
    ELSE 't' || {row}.workspace_id END"""
INSERT = (
    """INSERT INTO memory_item_fts(rowid, "text", "key", "value", tags)
    SELECT {row}.id, {row}."text", {row}."key", {row}."value", """
    + TAGS
    + """
    WHERE {row}.status = 'active';"""
)

SQLITE_FORWARDS = [
    "DROP TRIGGER IF EXISTS memory_item_fts_ai",
    "DROP TRIGGER IF EXISTS memory_item_fts_ad",
    "DROP TRIGGER IF EXISTS memory_item_fts_au",
    "DROP TABLE IF EXISTS memory_item_fts",
    """CREATE VIRTUAL TABLE memory_item_fts USING fts5(
        "text", "key", "value", tags, tokenize='porter unicode61')""",
    "CREATE TRIGGER memory_item_fts_ai AFTER INSERT ON memory_memoryitem BEGIN "
    + INSERT.format(row="new")
    + " END",
    "CREATE TRIGGER memory_item_fts_ad AFTER DELETE ON memory_memoryitem BEGIN "
    "DELETE FROM memory_item_fts WHERE rowid = old.id; END",
    # Constant SQL built from the templates above (no input).
    """CREATE TRIGGER memory_item_fts_au AFTER UPDATE OF "text", "key", "value", status, scope,
        owner_id, workspace_id ON memory_memoryitem BEGIN
        DELETE FROM memory_item_fts WHERE rowid = old.id; """  # noqa: S608
    + INSERT.format(row="new")
    + " END",
    """INSERT INTO memory_item_fts(rowid, "text", "key", "value", tags)
        SELECT m.id, m."text", m."key", m."value", """  # noqa: S608
    + TAGS.format(row="m")
    + """ FROM memory_memoryitem m WHERE m.status = 'active'""",
]


def forwards(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE_FORWARDS:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("memory", "0003_stored_search_vector")]

    # Going back to 0002's layout is not supported on SQLite: re-run 0002's statements instead.
    operations = [migrations.RunPython(forwards, migrations.RunPython.noop)]
