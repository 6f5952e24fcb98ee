from __future__ import annotations

import math
import sqlite3
from typing import Any

from django.apps import AppConfig
from django.db.backends.signals import connection_created


def _sqlite_math(sender: Any, connection: Any, **kwargs: Any) -> None:
    """Retrieval ranks in SQL with ``POWER``; SQLite has it only when built with its math
    functions (most builds are), so other builds get Python's."""
    if connection.vendor != "sqlite":
        return
    raw = connection.connection
    try:
        raw.execute("SELECT POWER(0.5, 1)")
    except sqlite3.OperationalError:  # no such function
        raw.create_function("POWER", 2, math.pow, deterministic=True)


class MemoryConfig(AppConfig):
    name = "agents.memory"
    label = "memory"
    verbose_name = "Agent memory"

    def ready(self) -> None:
        connection_created.connect(_sqlite_math, dispatch_uid="memory-sqlite-math")
