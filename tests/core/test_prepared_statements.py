"""With PostgreSQL, statements a connection runs again are prepared: parsed and planned once
per connection (``DATABASE_PREPARE_THRESHOLD``, collab/settings.py; the settings themselves are
tested in tests/lib/test_settings_fail_fast.py)."""

from __future__ import annotations

import pytest
from django.db import connection

from collab.tasks.models import Task


def _prepared_statements() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_prepared_statements")
        return int(cursor.fetchone()[0])


@pytest.mark.django_db
def test_a_statement_run_again_is_prepared_on_its_connection(task: Task) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    before = _prepared_statements()
    for _ in range(6):  # psycopg prepares a statement from its sixth run (threshold 5)
        assert Task.objects.filter(pk=task.pk, title__startswith="").exists()

    assert _prepared_statements() == before + 1
