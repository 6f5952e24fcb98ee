"""Turns: starting them (a message, the Ask button, an idle document, an answer), stopping,
failing and re-queueing them. Running one is the engine's job (``agents.engine``)."""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Exists, OuterRef, Q
from django.utils import timezone

from agents.chains.hops import delegated_names
from agents.models import Agent, Chain, Question, Trigger, Turn, TurnStatus
from agents.outbox import enqueue, events
from agents.schemas import TEXT_MAX
from agents.services import outside, remote_tasks
from agents.services.agents import join_task
from agents.services.chat import post_agent_message
from collab.lib.errors import Conflict
from collab.realtime import broadcast
from collab.tasks.models import DocumentUpdate, Message, Task
from collab.tasks.services import create_message
from collab.workspaces.models import Membership
from collab.workspaces.permissions import require_editor, require_same_workspace

MENTION_RE = re.compile(r"(?<![\w@])@([A-Za-z][A-Za-z0-9_-]{0,31})")


def enqueue_turn(turn_id: int) -> None:
    """Send the turn's job now (call it on commit). A broker that is down loses nothing: the
    turn stays ``queued`` and the sweep sends it again."""
    enqueue.send_job(enqueue.RUN_TURN, turn_id)


def start_turn(
    *,
    agent: Agent,
    task: Task,
    trigger: str,
    requested_by: User | None = None,
    inputs: dict[str, Any] | None = None,
    chain: Chain | None = None,
    parent: Turn | None = None,
    hop_kind: str = "",
) -> Turn:
    """Queue a turn. Input that arrives while one is queued joins it: nothing is dropped.
    ``chain``, ``parent``, ``hop_kind``: another agent's message addressed this one
    (``agents.services.chains``). A hop joins a queued turn outside any chain, which so becomes
    part of the chain (its guards count what it sends, its Stop cancels it), or one of the same
    chain; never one of another chain, which it queues behind (ADR 0022)."""
    if trigger not in Trigger.values:
        raise ValueError(f"Unknown trigger {trigger!r}.")
    if agent.workspace_id != task.workspace_id:
        raise PermissionDenied("That agent belongs to another workspace.")
    inputs = dict(inputs or {})
    # Inside a caller's transaction (post_message), no savepoint: a failure here fails it all.
    with transaction.atomic(savepoint=False):
        waiting = Turn.objects.select_for_update(of=("self",)).filter(
            agent=agent, task=task, status=TurnStatus.QUEUED, attempts=0
        )
        if chain is not None:
            waiting = waiting.filter(Q(chain__isnull=True) | Q(chain=chain))
        # A plan step, and a reviewer's check of one, is a turn of its own (its inputs name the
        # step the plan producer does or checks): joined into a queued mention, the step would
        # never be decided nor the mention answered.
        alone = trigger == Trigger.PLAN or "review_step" in inputs
        queued = None if alone else waiting.order_by("id").first()
        if queued is not None:
            merged = dict(queued.inputs)
            merged["message_ids"] = [*merged.get("message_ids", []), *inputs.get("message_ids", [])]
            if inputs.get("prompt"):
                merged["prompt"] = inputs["prompt"]
            queued.inputs = merged
            fields = ["inputs"]
            if chain is not None and queued.chain_id is None:
                queued.chain, queued.parent, queued.hop_kind = chain, parent, hop_kind
                fields += ["chain", "parent", "hop_kind"]
            queued.save(update_fields=fields)
            return queued
        turn = Turn.objects.create(
            agent=agent,
            task=task,
            trigger=trigger,
            requested_by=requested_by,
            inputs=inputs,
            chain=chain,
            parent=parent,
            hop_kind=hop_kind,
        )
        transaction.on_commit(lambda: enqueue_turn(turn.pk))
        transaction.on_commit(lambda: events.turn_changed(turn.pk, turn=turn))
        return turn


@transaction.atomic
def ask_agent(*, membership: Membership, agent: Agent, task: Task, prompt: str = "") -> Turn:
    """The "Ask <agent>" button."""
    require_editor(membership)
    require_same_workspace(membership, agent, task)
    if not agent.is_active or not agent.ask_button:
        raise ValidationError(f"{agent.name} cannot be asked right now.")
    prompt = prompt.strip()
    if len(prompt) > TEXT_MAX:
        raise ValidationError({"prompt": f"Keep the request under {TEXT_MAX:,} characters."})
    join_task(agent, task)
    inputs: dict[str, Any] = {}
    if prompt:  # the request is the person's chat message, so everyone sees what was asked
        inputs = {"prompt": prompt, "message_ids": [_post_ask(membership, agent, task, prompt)]}
    return start_turn(
        agent=agent, task=task, trigger=Trigger.ASK, requested_by=membership.user, inputs=inputs
    )


def _post_ask(membership: Membership, agent: Agent, task: Task, prompt: str) -> int:
    """The Ask box's prompt as its author's chat message, the agent mentioned (stored without
    the message hooks: this turn is the one it starts)."""
    mention = f"@{agent.name}"
    mentioned = {name.lower() for name in MENTION_RE.findall(prompt)}
    body = prompt if agent.name.lower() in mentioned else f"{mention} {prompt}"
    user = membership.user
    message = create_message(
        task_id=task.pk,
        kind=Message.Kind.HUMAN,
        author=user,
        author_name=user.get_username(),
        body=body,
    )
    transaction.on_commit(lambda: broadcast.chat_message(message.pk, message=message))
    return message.pk


def handle_human_message(*, message: Message) -> list[Turn]:
    """Called by ``post_message`` inside its transaction: start the turns it triggers."""
    if message.kind != Message.Kind.HUMAN:
        return []  # an agent's message addresses agents through its chain (services/chains.py)
    task = message.task
    mentioned = {name.lower() for name in MENTION_RE.findall(message.body)}
    # "@Writer draft it and ask @Reviewer to check it": the Writer hands over (ADR 0022)
    delegated = set(delegated_names(message.body))
    turns = []
    candidates = list(
        Agent.objects.filter(workspace_id=task.workspace_id, is_active=True).annotate(
            on_task=Exists(Agent.tasks.through.objects.filter(agent_id=OuterRef("pk"), task=task))
        )
    )
    # Names that are no agent here; unknown_mention_notice checks them against the members.
    not_agents = mentioned - {agent.name.lower() for agent in candidates}
    message.unknown_mentions = not_agents  # type: ignore[attr-defined]
    for agent in candidates:
        if agent.on_mention and agent.name.lower() in mentioned - delegated:
            join_task(agent, task, on_task=agent.on_task)  # known from the query above
            trigger = Trigger.MENTION
        elif agent.on_every_message and agent.on_task:
            trigger = Trigger.MESSAGE
        else:
            continue
        turns.append(
            start_turn(
                agent=agent,
                task=task,
                trigger=trigger,
                requested_by=message.author,
                inputs={"message_ids": [message.pk]},
            )
        )
    return turns


def unknown_mention_notice(*, message: Message) -> str:
    """What to tell the author of ``message`` about @names that are neither an agent nor a
    member of the workspace ("" when every @name is someone), so a typo is not met with
    silence."""
    not_agents = getattr(message, "unknown_mentions", None)  # left by handle_human_message
    if message.kind != Message.Kind.HUMAN or not not_agents:
        return ""  # the usual case costs no query
    workspace_id = message.task.workspace_id
    members = Membership.objects.filter(workspace_id=workspace_id).values_list(
        "user__username", flat=True
    )
    known = {name.lower() for name in members}
    shown = {name.lower(): name for name in MENTION_RE.findall(message.body)}
    unknown = [shown[lower] for lower in sorted(not_agents) if lower not in known]
    if not unknown:
        return ""
    agents = list(
        Agent.objects.filter(workspace_id=workspace_id, is_active=True)
        .order_by("name")
        .values_list("name", flat=True)
    )
    names = ", ".join(f"@{name}" for name in unknown)
    offer = (
        "Agents here: " + ", ".join(f"@{name}" for name in agents) + "."
        if agents
        else "This workspace has no agents yet."
    )
    return f"Nobody here is called {names}, so no agent was asked. {offer}"


def documents_edited(*, latest_updates: dict[int, int]) -> None:
    """Called inside the transaction that stores people's document edits, with the newest
    stored update id per task: agents that work when the document goes idle get a check
    ``AGENTS_IDLE_DOCUMENT_SECONDS`` later (debounced: only the check for the newest edit starts
    turns). One query for a whole flush batch, whatever the number of documents in it."""
    if not latest_updates:
        return
    watched = set(
        Agent.objects.filter(
            tasks__in=list(latest_updates), on_idle_document=True, is_active=True
        ).values_list("tasks", flat=True)
    )
    if not watched:
        return
    delay = settings.AGENTS_IDLE_DOCUMENT_SECONDS
    for task_id in sorted(watched):
        enqueue.on_commit(enqueue.DOCUMENT_IDLE, task_id, latest_updates[task_id], countdown=delay)


@transaction.atomic
def start_idle_turns(*, task_id: int, update_id: int) -> list[Turn]:
    """The document has had no edit since ``update_id``: start the watching agents' turns."""
    newest = (
        DocumentUpdate.objects.filter(document__task_id=task_id)
        .order_by("-id")
        .values_list("id", flat=True)
        .first()
    )
    if newest != update_id:
        return []  # edited again since: the check for that edit decides
    task = Task.objects.get(pk=task_id)
    started = []
    for agent in Agent.objects.filter(tasks=task_id, on_idle_document=True, is_active=True):
        seen = Turn.objects.filter(
            agent=agent, task=task, trigger=Trigger.IDLE, inputs__update_id=update_id
        )
        if not seen.exists():  # a redelivered check starts nothing twice
            started.append(
                start_turn(
                    agent=agent, task=task, trigger=Trigger.IDLE, inputs={"update_id": update_id}
                )
            )
    return started


def enqueue_next_turn(*, agent_id: int, task_id: int) -> None:
    """After a turn ends: wake the oldest turn that queued up behind it."""
    following = (
        Turn.objects.filter(agent_id=agent_id, task_id=task_id, status=TurnStatus.QUEUED)
        .order_by("id")
        .values_list("pk", flat=True)
        .first()
    )
    if following is not None:
        transaction.on_commit(lambda: enqueue_turn(following))


_STOPPABLE = (TurnStatus.QUEUED, TurnStatus.RUNNING, TurnStatus.WAITING)


@transaction.atomic
def cancel_turn(*, membership: Membership, turn: Turn) -> Turn:
    """The Stop button. The worker notices within a quarter of a second and stops. A turn of
    a chain of agents addressing agents stops the whole chain: every turn of it still queued,
    running or waiting is cancelled, and the hops it held are dropped."""
    require_editor(membership)
    require_same_workspace(membership, turn.task)
    locked = Turn.objects.select_for_update(of=("self",)).select_related("agent").get(pk=turn.pk)
    if locked.status not in _STOPPABLE and locked.chain_id is None:
        # It finished between the page (or the API client) reading it and the Stop arriving.
        raise Conflict(f"This turn has already finished ({locked.get_status_display().lower()}).")
    who = membership.user.get_username()
    stopped = [_cancel(locked, who)] if locked.status in _STOPPABLE else []
    if locked.chain_id is not None:
        Chain.objects.filter(pk=locked.chain_id).update(status=Chain.Status.STOPPED, held=[])
        others = (
            Turn.objects.select_for_update(of=("self",))
            .select_related("agent")
            .filter(chain_id=locked.chain_id, status__in=_STOPPABLE)
            .exclude(pk=locked.pk)
            .order_by("id")
        )
        stopped += [_cancel(other, who) for other in others]
    if not stopped:
        return locked
    names = sorted({t.agent.name for t in stopped})
    said = f"{who} stopped {' and '.join(names)}."
    if locked.chain_id is not None:
        said = f"{who} stopped this chain of agents: {len(stopped)} turn" + (
            f"s of {', '.join(names)} cancelled."
            if len(stopped) != 1
            else f" of {names[0]} cancelled."
        )
    # Said in the chat too, where everyone looks (the card alone said "Cancelled").
    note = post_agent_message(
        task_id=locked.task_id, author_name=locked.agent.name, body=said, kind=Message.Kind.SYSTEM
    )
    transaction.on_commit(lambda: broadcast.chat_message(note.pk))
    for cancelled in stopped:
        enqueue_next_turn(agent_id=cancelled.agent_id, task_id=cancelled.task_id)
    return locked


def _cancel(turn: Turn, who: str) -> Turn:
    """Cancel ``turn`` (locked by the caller) and withdraw its open questions."""
    turn.status = TurnStatus.CANCELLED
    turn.error = f"Stopped by {who}."
    turn.finished_at = timezone.now()
    turn.lease_expires_at = None
    turn.save(update_fields=["status", "error", "finished_at", "lease_expires_at"])
    for question in Question.objects.filter(turn=turn, status=Question.Status.OPEN):
        question.status = Question.Status.WITHDRAWN
        question.save(update_fields=["status"])
        transaction.on_commit(partial(events.question_changed, question.pk))
    transaction.on_commit(lambda: events.turn_changed(turn.pk, turn=turn))
    outside.notify_stopped(turn)  # an outside agent's program is told to stop
    remote_tasks.notify_stopped(turn)  # an A2A task waiting for an answer is canceled
    return turn


@transaction.atomic
def fail_turn(*, turn_id: int, error: str) -> None:
    """The turn cannot go on: record why and say so in the chat."""
    turn = Turn.objects.select_for_update(of=("self",)).select_related("agent").get(pk=turn_id)
    if turn.status not in (TurnStatus.QUEUED, TurnStatus.RUNNING):
        return
    turn.status = TurnStatus.FAILED
    turn.error = error[:2000]
    turn.finished_at = timezone.now()
    turn.lease_expires_at = None
    turn.save(update_fields=["status", "error", "finished_at", "lease_expires_at"])
    note = post_agent_message(
        task_id=turn.task_id,
        author_name=turn.agent.name,
        body=f"{turn.agent.name} could not finish this turn: {error[:500]}",
        kind=Message.Kind.SYSTEM,
    )
    transaction.on_commit(lambda: broadcast.chat_message(note.pk))
    transaction.on_commit(lambda: events.turn_changed(turn_id, turn=turn))
    if turn.parent_id is not None and turn.chain_id is not None:  # tell who handed it over
        enqueue.on_commit(enqueue.CHAIN_FAILURE, turn_id, note.pk)
    enqueue_next_turn(agent_id=turn.agent_id, task_id=turn.task_id)


def release_for_retry(*, turn_id: int, error: str) -> None:
    """Put a running turn back in the queue before the job retries it."""
    with transaction.atomic():
        updated = Turn.objects.filter(pk=turn_id, status=TurnStatus.RUNNING).update(
            status=TurnStatus.QUEUED, error=error[:2000], lease_expires_at=None, stream_text=""
        )
        if updated:
            transaction.on_commit(lambda: events.turn_changed(turn_id))
