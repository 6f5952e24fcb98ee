"""Acting and finishing: apply the turn's pending actions in order (each at most once), then end
the turn (done, or waiting for the answer to its question) and wake the next queued one."""

from __future__ import annotations

import time

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from agents import events
from agents.engine.outcome import Outcome
from agents.models import Action, ActionKind, Turn, TurnStatus
from agents.services import actions as action_services
from agents.services.turns import enqueue_next_turn


def apply_pending(turn: Turn, keys: list[str] | None = None) -> None:
    """Apply the turn's pending actions in order; ``keys``: those this delivery just stored
    (None: look them up)."""
    delay = settings.AGENTS_FAULT_ACTION_DELAY_MS / 1000
    if keys is None:
        keys = list(
            Action.objects.filter(turn=turn, status=Action.Status.PENDING)
            .order_by("index")
            .values_list("idempotency_key", flat=True)
        )
    for key in keys:
        if delay:
            time.sleep(delay)  # fault-injection hook for the worker-kill test only
        action_services.apply_action(idempotency_key=key)


def finish(turn: Turn) -> Outcome:
    """End the turn (done, or waiting for the answer to its question) unless it was stopped
    meanwhile, then wake the next queued turn. No transaction: the conditional UPDATE commits
    first, so a turn queued behind this one is either seen by the look-up that follows or, when
    it is claimed later, finds no running sibling."""
    # A decision with no question cannot have asked one (no query for the common case).
    kinds = {a.get("kind") for a in (turn.decision or {}).get("actions", [])}
    asked = (ActionKind.ASK in kinds or turn.decision is None) and Action.objects.filter(
        turn_id=turn.pk, kind=ActionKind.ASK, status=Action.Status.APPLIED
    ).exists()
    status = TurnStatus.WAITING if asked else TurnStatus.DONE
    finished_at = None if asked else timezone.now()
    ended = Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING).update(
        status=status, finished_at=finished_at, lease_expires_at=None
    )
    if not ended:
        return Outcome.of_status(
            Turn.objects.filter(pk=turn.pk).values_list("status", flat=True).first()
        )
    turn.status, turn.finished_at, turn.lease_expires_at = status, finished_at, None
    transaction.on_commit(lambda: events.turn_changed(turn.pk, turn=turn))
    enqueue_next_turn(agent_id=turn.agent_id, task_id=turn.task_id)
    return Outcome(status)
