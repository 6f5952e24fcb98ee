"""The turn engine: claim a turn, decide (stream the model's answer), act, finish.

``run_turn`` is what ``run_turn_job`` calls. It is safe to call again for the same turn at any
point (a redelivered job after a worker was killed):

* claiming is a short transaction; at most one turn per agent and task is ``running`` (a partial
  unique constraint), and a running turn holds a lease that its worker renews while it streams;
  a turn whose lease ran out (its worker died) is taken over by the next delivery;
* the validated decision and its actions are stored before any of them is applied, so a
  redelivery never asks the model again once it has decided; leading replies, notes and finish
  are the exception: they are applied in that same transaction and stored already applied;
* every other action is applied in its own transaction together with its ``applied`` mark,
  and is looked up by its idempotency key first, so no action is ever applied twice.
"""

from __future__ import annotations

import functools
import logging
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, F
from django.utils import timezone
from langchain_core.utils.json import parse_partial_json

from agents import events, llm, presence, signals
from agents.context import build_context, messages_for_log, prompt_messages
from agents.learning import decide_with_state
from agents.models import (
    FINAL_STATUSES,
    Action,
    ActionKind,
    ModelCall,
    ModelProfile,
    Trigger,
    Turn,
    TurnStatus,
)
from agents.policies_bridge import decision_options, policy_decision
from agents.schemas import DecisionOut, streamed_text
from collab.review.usage import check_budget
from collab.tasks.models import Document

log = logging.getLogger(__name__)

# Threads that run model calls while the job's thread owns the database (reused across turns;
# a stopped turn's call finishes in the background without holding the turn).
_producers = ThreadPoolExecutor(max_workers=16, thread_name_prefix="model-stream")

STREAM_BATCH_SECONDS = 0.1  # reply tokens reach pages in batches of at most 100 ms
IDLE_TICK_SECONDS = 0.25  # while the model is silent: renew the lease, notice a Stop


class TurnCancelled(Exception):
    """The turn was stopped (or taken over) while this worker was running it."""


class TurnBudgetExceeded(Exception):
    """The turn used more time than ``AGENTS_TURN_TIME_BUDGET_SECONDS``."""


def lease_seconds() -> int:
    return int(getattr(settings, "AGENTS_TURN_LEASE_SECONDS", 15))


def time_budget_seconds() -> int:
    return int(getattr(settings, "AGENTS_TURN_TIME_BUDGET_SECONDS", 120))


def _lease() -> Any:
    return timezone.now() + timedelta(seconds=lease_seconds())


# --- Claiming ---------------------------------------------------------------------------------


@dataclass
class Claim:
    turn: Turn | None
    outcome: str
    profile: ModelProfile | None = None  # the turn's resolved model profile, once claimed


_CLAIM_RELATED = (
    "agent",
    "agent__model_profile",
    "task",
    "task__workspace",
    "task__workspace__review_settings",  # the budget check needs no query when none is set
    "requested_by",
)


def _claim(turn_id: int) -> Claim:
    """Mark the turn running: the common case (a queued turn, no other turn of its agent
    running on the task) is one read and one conditional UPDATE; everything else (a redelivery,
    a lease to take over, a blocker, a switched-off agent) takes the locked path below."""
    turn = Turn.objects.select_related(*_CLAIM_RELATED).filter(pk=turn_id).first()
    if turn is None:
        return Claim(None, "missing")
    if turn.status == TurnStatus.QUEUED and turn.agent.is_active:
        profile = llm.resolve_profile(turn.agent.model_profile)
        now = timezone.now()
        running_sibling = Turn.objects.filter(
            agent_id=turn.agent_id, task_id=turn.task_id, status=TurnStatus.RUNNING
        )
        claimed = {
            "status": TurnStatus.RUNNING,
            "attempts": turn.attempts + 1,
            "lease_expires_at": _lease(),
            "started_at": turn.started_at or now,
            "provider": profile.provider,
            "model": profile.model,
            "model_label": profile.label,
            "policy_name": turn.agent.policy_name,
        }
        # One statement needs no transaction of its own; inside a caller's transaction, a
        # savepoint keeps a lost race from aborting it.
        guard = transaction.atomic() if connection.in_atomic_block else nullcontext()
        try:
            with guard:
                updated = (
                    Turn.objects.filter(
                        pk=turn_id, status=TurnStatus.QUEUED, attempts=turn.attempts
                    )
                    .exclude(Exists(running_sibling))
                    .update(**claimed)
                )
        except IntegrityError:  # a sibling was claimed between the two statements
            updated = 0
        if updated:
            for name, value in claimed.items():
                setattr(turn, name, value)
            transaction.on_commit(lambda: events.turn_changed(turn_id, turn=turn))
            return Claim(turn, "claimed", profile)
    return _claim_locked(turn_id)


def _claim_locked(turn_id: int) -> Claim:
    from agents.services import enqueue_turn

    with transaction.atomic():
        turn = (
            Turn.objects.select_for_update(of=("self",))
            .select_related(*_CLAIM_RELATED)
            .filter(pk=turn_id)
            .first()
        )
        if turn is None:
            return Claim(None, "missing")
        if turn.status in (*FINAL_STATUSES, TurnStatus.WAITING):
            return Claim(None, f"already {turn.status}")
        now = timezone.now()
        if turn.status == TurnStatus.RUNNING:
            if turn.lease_expires_at and turn.lease_expires_at > now:
                return Claim(None, "running elsewhere")
            log.warning("turn %s: lease expired, taking it over", turn.pk)
        else:
            blocker = (
                Turn.objects.filter(agent=turn.agent, task=turn.task, status=TurnStatus.RUNNING)
                .exclude(pk=turn.pk)
                .first()
            )
            if blocker is not None:
                # The blocker enqueues the next queued turn when it ends. If its worker died,
                # wake its own redelivery now rather than waiting for the broker to notice.
                if blocker.lease_expires_at is None or blocker.lease_expires_at <= now:
                    transaction.on_commit(lambda: enqueue_turn(blocker.pk))
                return Claim(None, "blocked")
        if not turn.agent.is_active:
            turn.status = TurnStatus.CANCELLED
            turn.error = "The agent was switched off."
            turn.finished_at = now
            turn.save(update_fields=["status", "error", "finished_at"])
            return Claim(None, "agent inactive")
        profile = llm.resolve_profile(turn.agent.model_profile)
        turn.status = TurnStatus.RUNNING
        turn.attempts += 1
        turn.lease_expires_at = _lease()
        turn.started_at = turn.started_at or now
        turn.provider = profile.provider
        turn.model = profile.model
        turn.model_label = profile.label
        turn.policy_name = turn.agent.policy_name
        claimed = [
            "status",
            "attempts",
            "lease_expires_at",
            "started_at",
            "provider",
            "model",
            "model_label",
            "policy_name",
        ]
        try:
            with transaction.atomic():
                turn.save(update_fields=claimed)
        except IntegrityError:
            return Claim(None, "blocked")
        transaction.on_commit(lambda: events.turn_changed(turn_id, turn=turn))
    return Claim(turn, "claimed", profile)


# --- Deciding ---------------------------------------------------------------------------------


class _Streamer:
    """Runs the model in a helper thread; this (the job's) thread owns the database.

    Every ≤100 ms while text arrives, and every 250 ms otherwise, one UPDATE both publishes the
    text so far for late pages, renews the lease, and notices a Stop (the UPDATE matches no
    row once the turn is no longer running).
    """

    def __init__(self, turn: Turn, model: Any, messages: list[Any], *, max_tokens: int) -> None:
        self.turn = turn
        # Output budget: the profile's max tokens, with slack for providers that count otherwise.
        self.max_chars = max_tokens * 4 * 2
        self.queue: queue.Queue[tuple[str, Any]] = queue.Queue()
        self.stop = threading.Event()
        self.text = ""
        self.tokens_in: int | None = None
        self.tokens_out: int | None = None
        self._shown = ""
        self.final_fields: dict[str, Any] = {}
        self.final_event: tuple[str, str] | None = None
        self._model = model
        self._messages = messages

    def _produce(self, model: Any, messages: list[Any]) -> None:
        try:
            for piece in llm.stream_model(model, messages):
                if self.stop.is_set():
                    break
                self.queue.put(("piece", piece))
        except BaseException as exc:
            self.queue.put(("error", exc))
        else:
            self.queue.put(("end", None))

    def run(self) -> str:
        _producers.submit(self._produce, self._model, self._messages)
        started = time.monotonic()
        deadline = started + time_budget_seconds()
        next_tick = started + IDLE_TICK_SECONDS
        try:
            while True:
                timeout = max(0.0, next_tick - time.monotonic())
                try:
                    kind, item = self.queue.get(timeout=timeout)
                except queue.Empty:
                    kind, item = "tick", None
                if kind == "error":
                    raise item
                if kind == "piece":
                    self.text += item.text
                    if len(self.text) > self.max_chars:
                        raise TurnBudgetExceeded("The model's answer went over its token budget.")
                    self.tokens_in = item.tokens_in or self.tokens_in
                    self.tokens_out = item.tokens_out or self.tokens_out
                    if not self._shown and streamed_text(self._partial()):
                        next_tick = time.monotonic()  # the first words go out at once
                    elif next_tick - time.monotonic() > STREAM_BATCH_SECONDS:
                        next_tick = time.monotonic() + STREAM_BATCH_SECONDS
                now = time.monotonic()
                if kind == "end":
                    self._end()
                    return self.text
                if now >= next_tick:
                    self._flush()
                    next_tick = now + IDLE_TICK_SECONDS
                if now > deadline:
                    raise TurnBudgetExceeded(
                        f"The turn took longer than its {time_budget_seconds()} s budget."
                    )
        finally:
            self.stop.set()

    def _partial(self) -> Any:
        try:
            return parse_partial_json(self.text)
        except ValueError:
            return None

    def _change(self) -> tuple[dict[str, Any], tuple[str, str] | None]:
        """The turn's fields for the text shown so far, and the stream event's (text, delta)
        when it changed since the last batch."""
        shown = streamed_text(self._partial())
        if shown == self._shown:
            return {}, None
        fields: dict[str, Any] = {"stream_text": shown}
        if not self._shown:
            fields["first_token_at"] = timezone.now()
        delta = shown[len(self._shown) :] if shown.startswith(self._shown) else shown
        self._shown = shown
        return fields, (shown, delta)

    def _flush(self) -> None:
        fields, event = self._change()
        matched = Turn.objects.filter(pk=self.turn.pk, status=TurnStatus.RUNNING).update(
            lease_expires_at=_lease(), **fields
        )
        if not matched:
            raise TurnCancelled
        presence.renew(self.turn.pk)
        if event is not None:
            events.stream(self.turn, *event)

    def _end(self) -> None:
        """The answer is complete: its last batch is written together with the decision (one
        UPDATE that also notices a Stop), and published when that commits."""
        self.final_fields, self.final_event = self._change()


def _await_signal(turn: Turn, future: Future[Any], deadline: float) -> Any | None:
    """A signal call's answer, renewing the lease meanwhile; None once the deadline passed.
    ``TurnCancelled`` if the turn was stopped (or taken over) while waiting."""
    while True:
        try:
            return future.result(
                timeout=max(0.0, min(IDLE_TICK_SECONDS, deadline - time.monotonic()))
            )
        except FutureTimeout:
            if time.monotonic() >= deadline:
                return None
            renewed = Turn.objects.filter(pk=turn.pk, status=TurnStatus.RUNNING).update(
                lease_expires_at=_lease()
            )
            if not renewed:
                raise TurnCancelled from None


def _model_signals(turn: Turn, profile: ModelProfile, context: dict[str, Any]) -> dict[str, Any]:
    """The policy's model signals (``agents/signals.py``): its calls run together in model
    threads, within a share of the turn's time budget; each is logged and counted, answered or
    not. A call that fails or times out gives no signal; only a Stop interrupts."""
    calls = signals.plan(turn.agent.policy_name, profile, context)
    if not calls:
        return {}
    budget = time_budget_seconds() * signals.TIME_SHARE
    deadline = time.monotonic() + budget
    stop = threading.Event()
    futures = [_producers.submit(signals.run_call, profile, call, stop) for call in calls]
    answers = []
    try:
        for call, future in zip(calls, futures, strict=True):
            answers.append(_await_signal(turn, future, deadline) or signals.timed_out(call, budget))
    finally:
        stop.set()  # calls still running (timed out, or the turn was stopped) end at once
        for future in futures[len(answers) :]:
            future.cancel()
        for call, answer in zip(calls, answers, strict=False):
            _log_call(turn, signals.model_call(turn, profile, call, answer), fields={})
    return signals.options(answers)


def _decide(turn: Turn, profile: ModelProfile, document: Document | None) -> list[str] | None:
    """Consult the policy (with the model signals it reads), then ask the model, validate, and
    store the decision and its actions (not yet applied). Returns the idempotency keys of the
    pending actions it stored (None: decided by an earlier delivery)."""
    context = build_context(turn, profile, document=document)
    # Signals first: no model call runs while decide_with_state holds a learning policy's row.
    options = decision_options(
        context, model_signals=lambda: _model_signals(turn, profile, context)
    )
    if turn.inputs.get("timed_out"):  # nobody answered the agent's question in time
        options = {**options, "timed_out": True}
    policy = decide_with_state(
        turn=turn, context=context, decide=functools.partial(policy_decision, options=options)
    )
    # Written with the decision (or with the failure), not on the way to the first token.
    decided: dict[str, Any] = {"context": dict(context), "policy_decision": policy}
    if policy.get("decision") == "ask" and policy.get("question"):
        decision = DecisionOut.model_validate(
            {"actions": [{"kind": "ask", "text": str(policy["question"])[:1400]}]}
        )
        return _store_decision(turn, decision, fields=decided)

    if policy.get("decision") == "suggest":
        context["policy_hint"] = "Propose document changes as suggestions; do not edit directly."
    if turn.inputs.get("timed_out"):
        context["policy_hint"] = (
            context.get("policy_hint", "")
            + f" Nobody answered your question within {turn.inputs.get('minutes', '?')} min:"
            " do not ask again; go ahead on your best guess and say what you assumed."
        ).strip()
    if policy.get("assumption"):
        context["policy_hint"] = (
            context.get("policy_hint", "") + " Tell people: " + str(policy["assumption"])
        ).strip()
    messages = prompt_messages(context, profile)
    call = ModelCall(
        turn=turn,
        agent=turn.agent,
        provider=profile.provider,
        model=profile.model,
        messages=messages_for_log(messages),
    )
    started = time.monotonic()
    streamer: _Streamer | None = None
    try:
        model = llm.build_chat_model(profile)
        streamer = _Streamer(turn, model, messages, max_tokens=profile.max_tokens)
        text = streamer.run()
        call.response = text
        decision = llm.parse_decision(profile, text)
    except BaseException as exc:
        call.error = f"{type(exc).__name__}: {exc}"[:2000]
        call.response = streamer.text if streamer else ""
        _measure(call, streamer, started, profile)
        _log_call(turn, call, fields=decided)
        raise
    _measure(call, streamer, started, profile)
    return _store_decision(
        turn,
        decision,
        fields={**decided, **streamer.final_fields},
        call=call,
        stream=streamer.final_event,
    )


def _measure(
    call: ModelCall, streamer: _Streamer | None, started: float, profile: ModelProfile
) -> None:
    call.latency_ms = int((time.monotonic() - started) * 1000)
    prompt_chars = sum(len(m["content"]) for m in call.messages)
    call.tokens_in = (streamer and streamer.tokens_in) or llm.tokens_for_chars(prompt_chars)
    call.tokens_out = (streamer and streamer.tokens_out) or llm.estimate_tokens(call.response)
    call.cost = profile.cost(call.tokens_in, call.tokens_out)


def _log_call(turn: Turn, call: ModelCall, *, fields: dict[str, Any]) -> None:
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


def _store_decision(
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
    from agents.services import apply_with_decision, validate_action

    stored = decision.model_dump()
    values = {**fields, "decision": stored, "lease_expires_at": _lease()}
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
        _log_call(turn, call, fields={})
    if status != TurnStatus.RUNNING:
        raise TurnCancelled
    return None  # decided by an earlier delivery: its stored actions are the ones applied


# --- Acting and finishing ---------------------------------------------------------------------


def _apply_pending(turn: Turn, keys: list[str] | None = None) -> None:
    """Apply the turn's pending actions in order; ``keys``: those this delivery just stored
    (None: look them up)."""
    from agents.services import apply_action

    delay = int(getattr(settings, "AGENTS_FAULT_ACTION_DELAY_MS", 0)) / 1000
    if keys is None:
        keys = list(
            Action.objects.filter(turn=turn, status=Action.Status.PENDING)
            .order_by("index")
            .values_list("idempotency_key", flat=True)
        )
    for key in keys:
        if delay:
            time.sleep(delay)  # fault-injection hook for the worker-kill test only
        apply_action(idempotency_key=key)


def _finish(turn: Turn) -> str:
    """End the turn (done, or waiting for the answer to its question) unless it was stopped
    meanwhile, then wake the next queued turn. No transaction: the conditional UPDATE commits
    first, so a turn queued behind this one is either seen by the look-up that follows or, when
    it is claimed later, finds no running sibling."""
    from agents.services import enqueue_next_turn

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
        return str(Turn.objects.filter(pk=turn.pk).values_list("status", flat=True).first())
    turn.status, turn.finished_at, turn.lease_expires_at = status, finished_at, None
    transaction.on_commit(lambda: events.turn_changed(turn.pk, turn=turn))
    enqueue_next_turn(agent_id=turn.agent_id, task_id=turn.task_id)
    return status


def run_turn(*, turn_id: int) -> str:
    """Run (or resume) a turn; returns what happened, for logs and tests.

    Raises ``llm.ModelError`` for failures worth a retry (the job owns the retry policy).
    """
    from agents.services import announce_assumption, fail_turn, prepare_assumption

    claim = _claim(turn_id)
    turn, profile = claim.turn, claim.profile
    if turn is None or profile is None:
        return claim.outcome
    if turn.decision is None:
        review = getattr(turn.task.workspace, "review_settings", None)  # loaded by the claim
        if review is not None and review.monthly_budget is not None:
            budget = check_budget(turn.task.workspace_id)
            if budget.blocked:  # the workspace's monthly hard stop (collab/review/usage.py)
                fail_turn(turn_id=turn_id, error=budget.message)
                return "over budget"
    # Its text (not the Yjs state) for the prompt, its id for the agent's presence.
    document = Document.objects.filter(task_id=turn.task_id).only("text").first()
    presence.show(
        turn_id=turn.pk,
        agent_id=turn.agent_id,
        name=turn.agent.name,
        colour=turn.agent.colour,
        document_id=document.pk if document is not None else None,
    )
    try:
        pending: list[str] | None = None
        if turn.decision is None:
            pending = _decide(turn, profile, document)
        prepare_assumption(turn=turn)  # a timed-out turn: the document before it acts (Undo)
        _apply_pending(turn, pending)
        if turn.trigger == Trigger.TIMEOUT:  # only a timed-out turn has an assumption
            announce_assumption(turn_id=turn.pk)  # ... and its "I assumed X" message
    except TurnCancelled:
        return "cancelled"
    except (llm.ModelConfigError, TurnBudgetExceeded) as exc:
        fail_turn(turn_id=turn_id, error=str(exc))
        return "failed"
    finally:
        presence.hide(turn.pk)
    return _finish(turn)


def release_for_retry(*, turn_id: int, error: str) -> None:
    """Put a running turn back in the queue before the job retries it."""
    with transaction.atomic():
        updated = Turn.objects.filter(pk=turn_id, status=TurnStatus.RUNNING).update(
            status=TurnStatus.QUEUED, error=error[:2000], lease_expires_at=None, stream_text=""
        )
        if updated:
            transaction.on_commit(lambda: events.turn_changed(turn_id))
