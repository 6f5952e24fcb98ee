"""Deciding: consult the clarification policy (with the model signals it reads), ask the model,
validate, and store the decision with its actions (not yet applied) in one transaction, so a
redelivery never asks the model again once it has decided."""

from __future__ import annotations

import functools
import threading
import time
from typing import Any

from django.db import transaction
from django.db.models import F

from agents import events, llm, signals
from agents.context import build_context, messages_for_log, prompt_messages
from agents.engine.claim import lease_expiry, seconds_left, time_budget_seconds
from agents.engine.stream import Streamer, TurnCancelled, await_signal, producers
from agents.learning import decide_with_state
from agents.models import Action, ActionKind, ModelCall, ModelProfile, Turn, TurnStatus
from agents.policies.tokens import estimate_tokens, tokens_for_chars
from agents.policies_bridge import (
    decision_options,
    grounding,
    policy_decision,
    preference_hint,
    restyled_actions,
)
from agents.records import TurnContext
from agents.schemas import DecisionOut
from agents.services.actions import apply_with_decision, validate_action
from collab.tasks.models import Document


def model_signals(turn: Turn, profile: ModelProfile, context: TurnContext) -> dict[str, Any]:
    """The policy's model signals (``agents/signals.py``): its calls run together in model
    threads, within a share of the turn's time budget; each is logged and counted, answered or
    not. A call that fails or times out gives no signal; only a Stop interrupts."""
    calls = signals.plan(turn.agent.policy_name, profile, context)
    if not calls:
        return {}
    budget = max(0.0, min(time_budget_seconds() * signals.TIME_SHARE, seconds_left(turn)))
    deadline = time.monotonic() + budget
    stop = threading.Event()
    futures = [producers.submit(signals.run_call, profile, call, stop) for call in calls]
    answers = []
    try:
        for call, future in zip(calls, futures, strict=True):
            answers.append(await_signal(turn, future, deadline) or signals.timed_out(call, budget))
    finally:
        stop.set()  # calls still running (timed out, or the turn was stopped) end at once
        for future in futures[len(answers) :]:
            future.cancel()
        for call, answer in zip(calls, answers, strict=False):
            log_call(turn, signals.model_call(turn, profile, call, answer), fields={})
    return signals.options(answers)


def decide(turn: Turn, profile: ModelProfile, document: Document | None) -> list[str] | None:
    """Consult the policy (with the model signals it reads), then ask the model, validate, and
    store the decision and its actions (not yet applied). Returns the idempotency keys of the
    pending actions it stored (None: decided by an earlier delivery)."""
    context = build_context(turn, profile, document=document)
    # Signals first: no model call runs while decide_with_state holds a learning policy's row.
    shown: dict[str, Any] = dict(context)  # as the policies read it (a mapping)
    options = decision_options(shown, model_signals=lambda: model_signals(turn, profile, context))
    if turn.inputs.get("timed_out"):  # nobody answered the agent's question in time
        options = {**options, "timed_out": True}
    policy = decide_with_state(
        turn=turn, context=shown, decide=functools.partial(policy_decision, options=options)
    )
    # Written with the decision (or with the failure), not on the way to the first token.
    decided: dict[str, Any] = {"context": shown, "policy_decision": policy.to_stored()}
    if policy.asks:
        decision = DecisionOut.model_validate(
            {"actions": [{"kind": "ask", "text": policy.question[:1400]}]}
        )
        return store_decision(turn, decision, fields=decided)

    if policy.suggests:
        context["policy_hint"] = "Propose document changes as suggestions; do not edit directly."
    if turn.inputs.get("timed_out"):
        context["policy_hint"] = (
            context.get("policy_hint", "")
            + f" Nobody answered your question within {turn.inputs.get('minutes', '?')} min:"
            " do not ask again; go ahead on your best guess and say what you assumed."
        ).strip()
    if policy.assumption:
        context["policy_hint"] = (
            context.get("policy_hint", "") + " Tell people: " + policy.assumption
        ).strip()
    if hint := preference_hint(context):
        context["policy_hint"] = (context.get("policy_hint", "") + " " + hint).strip()
    if profile.is_embedded:
        # The small model is shown no memory: its reply states only what the turn knows
        # (``grounding``), and its chips name only the asker's items among that.
        context["grounding"] = grounding(shown, policy.to_stored())
        shown["grounding"] = context["grounding"]
        shown["memory_item_ids_retrieved"] = shown.get("memory_item_ids", [])
        shown["memory_item_ids"] = context["memory_item_ids"] = list(
            context["grounding"]["memory_item_ids"]
        )
    messages = prompt_messages(context, profile)
    call = ModelCall(
        turn=turn,
        agent=turn.agent,
        provider=profile.provider,
        model=profile.model,
        messages=messages_for_log(messages),
    )
    started = time.monotonic()
    streamer: Streamer | None = None
    try:
        model = llm.build_chat_model(profile)
        streamer = Streamer(turn, model, messages, max_tokens=profile.max_tokens)
        text = streamer.run()
        call.response = text
        decision = llm.parse_decision(profile, text)
    except BaseException as exc:
        call.error = f"{type(exc).__name__}: {exc}"[:2000]
        call.response = streamer.text if streamer else ""
        measure(call, streamer, started, profile)
        log_call(turn, call, fields=decided)
        raise
    measure(call, streamer, started, profile)
    actions = restyled_actions(
        [a.model_dump() for a in decision.actions], context, assumption=policy.assumption
    )
    decision = DecisionOut.model_validate({"actions": actions})
    return store_decision(
        turn,
        decision,
        fields={**decided, **streamer.final_fields},
        call=call,
        stream=streamer.final_event,
    )


def measure(
    call: ModelCall, streamer: Streamer | None, started: float, profile: ModelProfile
) -> None:
    call.latency_ms = int((time.monotonic() - started) * 1000)
    prompt_chars = sum(len(m["content"]) for m in call.messages)
    call.tokens_in = (streamer and streamer.tokens_in) or tokens_for_chars(prompt_chars)
    call.tokens_out = (streamer and streamer.tokens_out) or estimate_tokens(call.response)
    call.cost = profile.cost(call.tokens_in, call.tokens_out)


def log_call(turn: Turn, call: ModelCall, *, fields: dict[str, Any]) -> None:
    """Log a model call that is not stored with a decision (a signal call, or a decision call
    that failed or whose turn was stopped or decided elsewhere meanwhile), and count its tokens
    on the turn."""
    call.save()
    Turn.objects.filter(pk=turn.pk).update(
        tokens_in=F("tokens_in") + call.tokens_in,
        tokens_out=F("tokens_out") + call.tokens_out,
        cost=F("cost") + call.cost,
        **fields,
    )
    turn.tokens_in += call.tokens_in
    turn.tokens_out += call.tokens_out
    turn.cost += call.cost


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
