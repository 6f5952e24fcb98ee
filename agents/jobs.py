"""Celery jobs of the agents app. Ids only; each calls one service and owns its retries.

Their names are fixed in ``agents.outbox.enqueue``, through which services send them on commit."""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.db import DatabaseError, OperationalError
from kombu.exceptions import OperationalError as BrokerError

from agents import llm
from agents.engine.lease import out_of_time_message, seconds_left
from agents.engine.outcome import Outcome
from agents.engine.runner import run_turn
from agents.models import Turn
from agents.outbox import enqueue
from agents.services import outside, remote_tasks
from agents.services.chains import report_failure
from agents.services.plans import sync_plan_of
from agents.services.questions import expire_question
from agents.services.sweep import sweep
from agents.services.turns import fail_turn, release_for_retry, start_idle_turns

log = logging.getLogger(__name__)

MAX_MODEL_RETRIES = 3
BACKOFF_CAP_SECONDS = 30


def retry_fits_in_budget(turn_id: int, wait: float) -> bool:
    """Whether a retry after ``wait`` seconds still starts within the turn's time budget."""
    turn = Turn.objects.filter(pk=turn_id).only("started_at").first()
    return turn is not None and seconds_left(turn) > wait + 1


def backoff_seconds(retries: int) -> int:
    """1, 2, 4 … seconds, at most ``BACKOFF_CAP_SECONDS``."""
    return int(min(BACKOFF_CAP_SECONDS, 2**retries))


@shared_task(
    bind=True,
    name=enqueue.RUN_TURN,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=MAX_MODEL_RETRIES,
)
def run_turn_job(self: Any, turn_id: int) -> str:
    """Run or resume one agent turn. Safe to deliver twice (see ``agents/engine/runner.py``)."""
    try:
        return str(run_turn(turn_id=turn_id))
    except llm.ModelError as exc:
        if self.request.retries >= self.max_retries:
            fail_turn(turn_id=turn_id, error=f"The model kept failing: {exc}")
            return str(Outcome.FAILED)
        if not retry_fits_in_budget(turn_id, backoff_seconds(self.request.retries)):
            fail_turn(turn_id=turn_id, error=f"{out_of_time_message()} Last error: {exc}")
            return str(Outcome.FAILED)
        log.warning("turn %s: model error, retrying: %s", turn_id, exc)
        release_for_retry(turn_id=turn_id, error=str(exc))
        raise self.retry(exc=exc, countdown=backoff_seconds(self.request.retries)) from exc


# What the small jobs retry on: the database or the broker being away for a moment. A bounded
# exponential backoff with jitter (1, 2, 4 ... s, at most a minute, five times); beyond that
# the sweep (sweep_job) finds what is still due.
TRANSIENT_ERRORS = (DatabaseError, OperationalError, BrokerError, ConnectionError, TimeoutError)
SMALL_JOB_RETRY: dict[str, Any] = {
    "acks_late": True,
    "reject_on_worker_lost": True,
    "autoretry_for": TRANSIENT_ERRORS,
    "retry_backoff": True,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": 5,
}


@shared_task(name=enqueue.DOCUMENT_IDLE, **SMALL_JOB_RETRY)
def document_idle_job(task_id: int, update_id: int) -> int:
    """Debounced check after people edit a document; starts idle-triggered turns."""
    return len(start_idle_turns(task_id=task_id, update_id=update_id))


@shared_task(name=enqueue.PLAN_SYNC, **SMALL_JOB_RETRY)
def plan_sync_job(task_id: int) -> int:
    """People edited a document with a plan: read its steps again (idempotent)."""
    plan = sync_plan_of(task_id=task_id)
    return 0 if plan is None else plan.steps.count()


@shared_task(name=enqueue.QUESTION_TIMEOUT, **SMALL_JOB_RETRY)
def question_timeout_job(question_id: int) -> int | None:
    """A question's time is up: resume its agent on its best guess if nobody answered.
    Idempotent: an answered, withdrawn or already expired question is left alone."""
    turn = expire_question(question_id=question_id)
    return turn.pk if turn is not None else None


@shared_task(name=enqueue.CHAIN_FAILURE, **SMALL_JOB_RETRY)
def chain_failure_job(turn_id: int, note_id: int) -> list[int]:
    """A turn another agent handed over failed: tell that agent (an error hop of the chain).
    Idempotent: a failure is reported once."""
    return [turn.pk for turn in report_failure(turn_id=turn_id, note_id=note_id)]


@shared_task(name=enqueue.SWEEP, ignore_result=True, **SMALL_JOB_RETRY)
def sweep_job() -> dict[str, list[int]]:
    """Every ``AGENTS_SWEEP_SECONDS`` (``CELERY_BEAT_SCHEDULE``): send again the turns whose
    job was lost or whose worker died, and expire the questions whose time is up."""
    return sweep().as_dict()


@shared_task(
    bind=True,
    name=enqueue.DELIVER_STOP,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=outside.MAX_DELIVERY_TRIES,
)
def deliver_stop_job(self: Any, delivery_id: int) -> bool:
    """Tell an outside agent's program that a person stopped its turn: a signed
    ``turn.cancelled`` webhook, retried as the turn's was (``outside.send_stop``). Idempotent:
    an acknowledged notice is not sent again."""
    sent = outside.send_stop(delivery_id=delivery_id, tries=self.request.retries)
    if sent.done:
        return not sent.error
    raise self.retry(countdown=sent.retry_in, max_retries=outside.MAX_DELIVERY_TRIES)


@shared_task(
    bind=True,
    name=enqueue.CANCEL_A2A_TASK,
    acks_late=True,
    reject_on_worker_lost=True,
    max_retries=remote_tasks.MAX_CANCEL_TRIES,
)
def cancel_a2a_task_job(self: Any, turn_id: int) -> bool:
    """A person stopped an A2A agent's turn while its task waited for their answer: cancel
    that task on the agent's side (``remote_tasks.cancel_waiting_task``), retried with a
    bounded backoff while the agent cannot be reached. Idempotent."""
    tried = remote_tasks.cancel_waiting_task(turn_id=turn_id)
    if tried.done:
        return not tried.error
    if self.request.retries >= remote_tasks.MAX_CANCEL_TRIES:
        log.warning("gave up cancelling the A2A task of turn %s: %s", turn_id, tried.error)
        return False
    raise self.retry(countdown=backoff_seconds(self.request.retries))
