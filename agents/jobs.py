"""Celery jobs of the agents app. Ids only; each calls one service and owns its retries."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task

from agents import llm, services, turns

log = logging.getLogger(__name__)

MAX_MODEL_RETRIES = 3
BACKOFF_CAP_SECONDS = 30


def backoff_seconds(retries: int) -> int:
    """1, 2, 4 … seconds, at most ``BACKOFF_CAP_SECONDS``."""
    return int(min(BACKOFF_CAP_SECONDS, 2**retries))


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=MAX_MODEL_RETRIES)
def run_turn_job(self: Any, turn_id: int) -> str:
    """Run or resume one agent turn. Safe to deliver twice (see ``agents/turns.py``)."""
    try:
        return turns.run_turn(turn_id=turn_id)
    except llm.ModelError as exc:
        if self.request.retries >= self.max_retries:
            services.fail_turn(turn_id=turn_id, error=f"The model kept failing: {exc}")
            return "failed"
        log.warning("turn %s: model error, retrying: %s", turn_id, exc)
        turns.release_for_retry(turn_id=turn_id, error=str(exc))
        raise self.retry(exc=exc, countdown=backoff_seconds(self.request.retries)) from exc


@shared_task(acks_late=True)
def document_idle_job(task_id: int, update_id: int) -> int:
    """Debounced check after people edit a document; starts idle-triggered turns."""
    return len(services.start_idle_turns(task_id=task_id, update_id=update_id))


@shared_task(acks_late=True)
def question_timeout_job(question_id: int) -> int | None:
    """A question's time is up: resume its agent on its best guess if nobody answered.
    Idempotent: an answered, withdrawn or already expired question is left alone."""
    turn = services.expire_question(question_id=question_id)
    return turn.pk if turn is not None else None
