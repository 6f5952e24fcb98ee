"""Enqueueing jobs by name, on commit: services never import ``jobs.py``.

Every job of the agents app is named here and in its ``@shared_task(name=...)``; a service
registers ``on_commit(NAME, *args)`` inside its transaction and the job is sent once the
transaction commits. Sending never raises: when the broker is down the failure is logged and
the row the job would have read stays as it is (a ``queued`` turn, an open question), and the
periodic sweep (``agents.services.sweep``) sends it again once the broker is back. A committed
request therefore never turns into a 500 because Redis was away.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import current_app
from django.db import transaction

log = logging.getLogger(__name__)

RUN_TURN = "agents.jobs.run_turn_job"
DOCUMENT_IDLE = "agents.jobs.document_idle_job"
QUESTION_TIMEOUT = "agents.jobs.question_timeout_job"
SWEEP = "agents.jobs.sweep_job"
CHAIN_FAILURE = "agents.jobs.chain_failure_job"
PLAN_SYNC = "agents.jobs.plan_sync_job"
DELIVER_STOP = "agents.jobs.deliver_stop_job"
CANCEL_A2A_TASK = "agents.jobs.cancel_a2a_task_job"


def send_job(name: str, *args: Any, countdown: float | None = None) -> bool:
    """Send job ``name`` with ``args`` now; False (logged) if the broker would not take it."""
    try:
        current_app.send_task(name, args=args, countdown=countdown)
    except Exception:  # the broker is down: the sweep sends it again
        log.warning("could not enqueue %s%r; the sweep will retry", name, args, exc_info=True)
        return False
    return True


def on_commit(name: str, *args: Any, countdown: float | None = None) -> None:
    """Send job ``name`` once the current transaction commits (at once outside of one)."""
    # A lambda, not a partial: ``send_job`` is looked up when the callback runs (a test seam).
    transaction.on_commit(lambda: send_job(name, *args, countdown=countdown))
