"""Memory's jobs are enqueued by name, on commit: services never import ``jobs.py``.

``jobs.py`` names each job (``@shared_task(name=...)``); these helpers send by that name through
the project's Celery app, so the import graph runs one way (jobs → services, never back).
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import transaction

from agents.outbox import enqueue


def send(name: str, *args: Any, countdown: int | None = None) -> None:
    """Send job ``name`` now (JSON arguments, ids only). Tests replace this seam. A broker that
    is down is logged, never raised into the request that already committed
    (``agents.outbox.enqueue.send_job``): the next message schedules reflection again."""
    enqueue.send_job(name, *args, countdown=countdown)


def enqueue_on_commit(name: str, *args: Any, countdown: int | None = None) -> None:
    """Send job ``name`` once the current transaction commits (at once outside one)."""
    transaction.on_commit(lambda: send(name, *args, countdown=countdown))


def quiet_seconds() -> int:
    """How long a chat must be quiet before reflection reads it."""
    return int(settings.MEMORY_REFLECTION_QUIET_SECONDS)
