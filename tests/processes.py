"""Other processes on the test database: a Celery worker, a server, ``manage.py shell``
(their settings are tests/live_settings.py)."""

from __future__ import annotations

import os
import sys
import uuid

from django.db import connection


def live_env(**extra: str) -> dict[str, str]:
    """The environment of a process that works on this test session's database."""
    return dict(
        os.environ,
        DJANGO_SETTINGS_MODULE="tests.live_settings",
        COLLAB_TEST_DB_NAME=str(connection.settings_dict["NAME"]),
        **extra,
    )


def worker_command(name: str, *options: str) -> list[str]:
    """``celery worker`` with a unique host name (``name-…``) and no chatter with other
    workers; ``options`` such as ``--pool=solo`` or ``--loglevel=INFO``."""
    return [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "collab",
        "worker",
        "--without-heartbeat",
        "--without-mingle",
        "--without-gossip",
        *options,
        f"--hostname={name}-{uuid.uuid4().hex[:8]}@%h",
    ]
