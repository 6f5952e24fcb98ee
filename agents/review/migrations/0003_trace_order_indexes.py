"""Order indexes for the trace lists, and statistics for the full-text index (Postgres).

The trace lists page newest first by (created_at, id): with these indexes a date range is an
index range and every page starts where the previous one ended. They replace 0002's index on
created_at alone.

ANALYZE collects statistics for the full-text index's expression: without them the planner
cannot tell a common word from a rare one (see ``agents.review.traces._search_sql``).
"""

from __future__ import annotations

from typing import Any

from django.db import migrations


def analyze(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute("ANALYZE agents_modelcall")
        schema_editor.execute("ANALYZE agents_turn")


class Migration(migrations.Migration):
    dependencies = [("review", "0002_trace_indexes")]

    operations = [
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS review_modelcall_created_id_idx "
            "ON agents_modelcall (created_at, id)",
            "DROP INDEX IF EXISTS review_modelcall_created_id_idx",
        ),
        migrations.RunSQL(
            "CREATE INDEX IF NOT EXISTS review_turn_created_id_idx ON agents_turn (created_at, id)",
            "DROP INDEX IF EXISTS review_turn_created_id_idx",
        ),
        migrations.RunSQL(
            "DROP INDEX IF EXISTS review_modelcall_created_idx",
            "CREATE INDEX IF NOT EXISTS review_modelcall_created_idx "
            "ON agents_modelcall (created_at)",
        ),
        migrations.RunPython(analyze, migrations.RunPython.noop),
    ]
