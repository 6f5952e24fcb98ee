"""The sixth stage, apply: the decision and its actions stored in one transaction, then each
pending action applied in its own transaction together with its ``applied`` mark (looked up by
its idempotency key first, so none is ever applied twice); events go out on commit.

Storing first means a redelivery never asks a producer again once the turn has decided;
leading replies, notes and finish are applied in that same transaction and stored applied.
"""

from __future__ import annotations

import functools
import time
from typing import Any

from django.conf import settings
from django.db import transaction

from agents.engine.calls import log_call
from agents.engine.decide import Decision
from agents.engine.lease import lease_expiry
from agents.engine.producers import Produced
from agents.engine.stream import TurnCancelled
from agents.models import Action, ActionKind, ModelCall, Trigger, Turn, TurnStatus
from agents.outbox import events
from agents.schemas import DecisionOut
from agents.services import actions as action_services
from agents.services.actions import apply_with_decision, validate_action
from agents.services.questions import announce_assumption, prepare_assumption


def store_produced(turn: Turn, decision: Decision, produced: Produced) -> list[str] | None:
    """Store the decision and what was produced for it (``store_decision``)."""
    return store_decision(
        turn,
        produced.actions,
        fields={
            "context": produced.context,
            "policy_decision": decision.record.to_stored(),
            **produced.fields,
        },
        call=produced.call,
        stream=produced.stream,
    )


def store_decision(
    turn: Turn,
    decision: DecisionOut,
    *,
    fields: dict[str, Any],
    call: ModelCall | None = None,
    stream: tuple[str, str] | None = None,
) -> list[str] | None:
    """Store the decision, its actions (leading replies, notes and finish applied, the others
    pending), the model call's log and the turn's ``fields`` in one transaction whose first
    statement is a conditional UPDATE: it matches no row once the turn was stopped or taken
    over, or was decided by an earlier delivery.
    ``stream``: the answer's last batch of text (in ``fields``), published once stored.
    Returns the pending actions' keys, or None when an earlier delivery decided."""
    stored = decision.model_dump()
    values = {**fields, "decision": stored, "lease_expires_at": lease_expiry()}
    if call is not None:
        values["tokens_in"] = turn.tokens_in + call.tokens_in
        values["tokens_out"] = turn.tokens_out + call.tokens_out
        values["cost"] = turn.cost + call.cost
    actions: list[Action] = []
    with transaction.atomic():
        updated = Turn.objects.filter(
            pk=turn.pk, status=TurnStatus.RUNNING, decision__isnull=True
        ).update(**values)
        if updated:
            if call is not None:
                call.save()
            if stream is not None:  # the last batch of text, once stored (before a reply's message)
                transaction.on_commit(functools.partial(events.stream, turn, *stream))
            for index, out in enumerate(decision.actions):
                payload = out.model_dump()
                problem = validate_action(turn=turn, kind=out.kind, payload=payload)
                if out.kind == ActionKind.ASK and turn.inputs.get("timed_out"):
                    problem = "no questions after a question timed out"
                actions.append(
                    Action(
                        turn=turn,
                        index=index,
                        kind=out.kind,
                        payload=payload,
                        idempotency_key=f"turn:{turn.pk}:action:{index}",
                        status=Action.Status.SKIPPED if problem else Action.Status.PENDING,
                        detail=problem or "",
                    )
                )
            apply_with_decision(turn=turn, actions=actions)
            Action.objects.bulk_create(actions)
    if updated:
        turn.decision = stored
        for name, value in fields.items():  # what the card shows next ("answered by …")
            setattr(turn, name, value)
        if call is not None:
            turn.tokens_in, turn.tokens_out, turn.cost = (
                values["tokens_in"],
                values["tokens_out"],
                values["cost"],
            )
        return [a.idempotency_key for a in actions if a.status == Action.Status.PENDING]
    status = Turn.objects.filter(pk=turn.pk).values_list("status", flat=True).first()
    if call is not None:
        if status != TurnStatus.RUNNING:
            call.error = "TurnCancelled: "
        log_call(turn, call, fields={})
    if status != TurnStatus.RUNNING:
        raise TurnCancelled
    return None  # decided by an earlier delivery: its stored actions are the ones applied


def apply_pending(turn: Turn, keys: list[str] | None = None) -> int:
    """Apply the turn's pending actions in order; ``keys``: those this delivery just stored
    (None: look them up). Returns how many it went through."""
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
    return len(keys)


def apply_actions(turn: Turn, keys: list[str] | None) -> int:
    """Apply what the turn stored: a timed-out turn first records the document before it acts
    (its Undo), and afterwards says "I assumed X". Returns how many pending actions it applied."""
    prepare_assumption(turn=turn)
    applied = apply_pending(turn, keys)
    if turn.trigger == Trigger.TIMEOUT:  # only a timed-out turn has an assumption
        announce_assumption(turn_id=turn.pk)
    return applied
