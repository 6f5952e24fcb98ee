"""The last stage, finish: the turn ends (done, or waiting for the answer to its question)
unless it was stopped meanwhile, its trace is written, and the next queued turn wakes. (A
learning policy's state was updated when it decided; feedback teaches it later, through
``agents.services.learning.learn_from_feedback``.)"""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from agents.engine.outcome import Outcome
from agents.models import Action, ActionKind, Turn, TurnStatus
from agents.outbox import events
from agents.services.plans import step_turn_finished
from agents.services.turns import enqueue_next_turn


def finish(turn: Turn) -> Outcome:
    """End the turn unless it was stopped meanwhile, then wake the next queued turn. No
    transaction: the conditional UPDATE commits first, so a turn queued behind this one is
    either seen by the look-up that follows or, when it is claimed later, finds no running
    sibling."""
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
    if status == TurnStatus.DONE and (
        turn.inputs.get("plan_step") or turn.inputs.get("review_step")
    ):
        # its check (or the reviewer's verdict) decides the step; the agent's next starts
        step_turn_finished(turn=turn)
    return Outcome(status)
