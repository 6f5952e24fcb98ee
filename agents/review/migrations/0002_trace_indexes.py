"""Indexes the review pages need on the agents app's model calls.

Raw SQL (not ``Meta.indexes``) so that the agents app's models stay as their owners wrote
them: Django's migration state does not track these, and ``makemigrations --check`` stays clean.

* created_at: date ranges of the trace list, usage and exports.
* (agent_id, created_at): a workspace's spend this month (``check_budget`` before every turn).
* full-text (Postgres only): the trace list's search over prompts and responses; the
  expression must match ``agents.review.traces._search_sql`` exactly.
"""

from __future__ import annotations

from typing import Any

from django.db import migrations

FTS_INDEX = (
    "CREATE INDEX IF NOT EXISTS review_modelcall_fts_idx ON agents_modelcall USING gin "
    "(to_tsvector('simple'::regconfig, coalesce(response, '') || ' ' || messages::text))"
)


def create_fts(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FTS_INDEX)


def drop_fts(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("DROP INDEX IF EXISTS review_modelcall_fts_idx")


class Migration(migrations.Migration):
    dependencies = [
        ("review", "0001_initial"),
        ("agents", "0001_initial"),
    ]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS review_modelcall_created_idx "
            "ON agents_modelcall (created_at)",
            "DROP INDEX IF EXISTS review_modelcall_created_idx",
        ),
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS review_modelcall_agent_created_idx "
            "ON agents_modelcall (agent_id, created_at)",
            "DROP INDEX IF EXISTS review_modelcall_agent_created_idx",
        ),
        migrations.RunPython(create_fts, drop_fts),
    ]
