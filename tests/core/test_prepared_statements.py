"""With PostgreSQL, statements a connection runs again are prepared: parsed and planned once
per connection (``DATABASE_PREPARE_THRESHOLD``, collab/settings.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from collab.tasks.models import Task

ROOT = Path(__file__).resolve().parents[2]


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


def _database_options(**env: str) -> dict[str, object]:
    environ = {k: v for k, v in os.environ.items() if k != "DATABASE_PREPARE_THRESHOLD"}
    environ.update(DJANGO_SETTINGS_MODULE="collab.settings", **env)
    code = (
        "import json, django; django.setup(); from django.conf import settings; "
        "print(json.dumps(settings.DATABASES['default'].get('OPTIONS', {})))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return dict(json.loads(result.stdout.strip().splitlines()[-1]))


def test_postgres_binds_on_the_server_and_a_pooler_can_turn_preparing_off() -> None:
    url = "postgres://collab@db:5432/collab"

    assert _database_options(DATABASE_URL=url) == {
        "server_side_binding": True,
        "prepare_threshold": 5,
    }
    assert _database_options(DATABASE_URL=url, DATABASE_PREPARE_THRESHOLD="0") == {
        "server_side_binding": True,
        "prepare_threshold": None,
    }
