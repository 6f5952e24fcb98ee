"""Every change to agents, turns, suggestions, questions and notes goes through here.

Broadcasts and job enqueues are registered with ``transaction.on_commit``. The turn engine
itself (claim, stream, decide) is ``agents/turns.py``; it applies actions through
``apply_action`` below.
"""

from __future__ import annotations

import difflib
import logging
import re
import time
from dataclasses import dataclass, field
from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from agents import events, presence
from agents.learning import learn_from_feedback
from agents.models import (
    FEEDBACK_COMMENT_MAX,
    Action,
    ActionKind,
    Agent,
    AgentMode,
    AgentNote,
    Assumption,
    Feedback,
    ModelProfile,
    Question,
    Suggestion,
    Trigger,
    Turn,
    TurnStatus,
)
from agents.schemas import TEXT_MAX
from agents.selectors import FEEDBACK_TARGET_FIELDS, FeedbackTarget
from collab.lib import ytext
from collab.realtime import broadcast
from collab.tasks import documents
from collab.tasks.models import Document, DocumentUpdate, Message, Task
from collab.workspaces.models import Membership

log = logging.getLogger(__name__)

MENTION_RE = re.compile(r"(?<![\w@])@([A-Za-z][A-Za-z0-9_-]{0,31})")
AGENT_FIELDS = (
    "name",
    "colour",
    "instructions",
    "model_profile",
    "policy_name",
    "mode",
    "on_mention",
    "on_every_message",
    "on_idle_document",
    "ask_button",
    "question_timeout_minutes",
    "is_active",
    "learn_per_person",
)


def _require_editor(membership: Membership) -> None:
    if not membership.can_edit:
        raise PermissionDenied("Viewers can read but not change this workspace.")


def _require_owner(membership: Membership) -> None:
    if not membership.is_owner:
        raise PermissionDenied("Only workspace owners manage agents.")


def _require_same_workspace(membership: Membership, *objects: Any) -> None:
    for obj in objects:
        if obj.workspace_id != membership.workspace_id:
            raise PermissionDenied("That belongs to another workspace.")


# --- Managing agents --------------------------------------------------------------------------


def _check_agent(agent: Agent) -> None:
    agent.full_clean(exclude=["workspace", "created_by"], validate_unique=False)
    clash = Agent.objects.filter(workspace_id=agent.workspace_id, name__iexact=agent.name).exclude(
        pk=agent.pk
    )
    if clash.exists():
        raise ValidationError({"name": "Another agent in this workspace has that name."})
    from agents.policies_bridge import known_policy

    if not known_policy(agent.policy_name):
        raise ValidationError({"policy_name": f"Unknown policy {agent.policy_name!r}."})


@transaction.atomic
def create_agent(*, membership: Membership, name: str, **fields: Any) -> Agent:
    _require_owner(membership)
    unknown = set(fields) - set(AGENT_FIELDS)
    if unknown:
        raise TypeError(f"Unknown agent fields: {sorted(unknown)}")
    agent = Agent(workspace=membership.workspace, name=name.strip(), created_by=membership.user)
    for key, value in fields.items():
        setattr(agent, key, value)
    _check_agent(agent)
    agent.save()
    return agent


@transaction.atomic
def update_agent(*, membership: Membership, agent: Agent, **fields: Any) -> Agent:
    _require_owner(membership)
    _require_same_workspace(membership, agent)
    unknown = set(fields) - set(AGENT_FIELDS)
    if unknown:
        raise TypeError(f"Unknown agent fields: {sorted(unknown)}")
    for key, value in fields.items():
        setattr(agent, key, value.strip() if key == "name" else value)
    _check_agent(agent)
    agent.save()
    return agent


@transaction.atomic
def add_agent_to_task(*, membership: Membership, agent: Agent, task: Task) -> None:
    _require_editor(membership)
    _require_same_workspace(membership, agent, task)
    _join_task(agent, task)


@transaction.atomic
def remove_agent_from_task(*, membership: Membership, agent: Agent, task: Task) -> None:
    _require_editor(membership)
    _require_same_workspace(membership, agent, task)
    agent.tasks.remove(task)
    transaction.on_commit(partial(events.task_agents_changed, task.pk))


def _join_task(agent: Agent, task: Task, *, on_task: bool | None = None) -> None:
    """Put ``agent`` on ``task`` unless it is already there (``on_task``: whether it is, when
    the caller knows); open pages then get its card on commit, before anything its turns
    publish (the turn is enqueued after this is registered)."""
    if on_task is None:
        on_task = agent.tasks.filter(pk=task.pk).exists()
    if not on_task:
        agent.tasks.add(task)
        transaction.on_commit(partial(events.task_agents_changed, task.pk))


# --- Starting and stopping turns --------------------------------------------------------------


def enqueue_turn(turn_id: int) -> None:
    from agents.jobs import run_turn_job

    run_turn_job.delay(turn_id)


def start_turn(
    *,
    agent: Agent,
    task: Task,
    trigger: str,
    requested_by: User | None = None,
    inputs: dict[str, Any] | None = None,
) -> Turn:
    """Queue a turn. Input that arrives while one is queued joins it: nothing is dropped."""
    if trigger not in Trigger.values:
        raise ValueError(f"Unknown trigger {trigger!r}.")
    if agent.workspace_id != task.workspace_id:
        raise PermissionDenied("That agent belongs to another workspace.")
    inputs = dict(inputs or {})
    # Inside a caller's transaction (post_message), no savepoint: a failure here fails it all.
    with transaction.atomic(savepoint=False):
        queued = (
            Turn.objects.select_for_update(of=("self",))
            .filter(agent=agent, task=task, status=TurnStatus.QUEUED, attempts=0)
            .order_by("id")
            .first()
        )
        if queued is not None:
            merged = dict(queued.inputs)
            merged["message_ids"] = [*merged.get("message_ids", []), *inputs.get("message_ids", [])]
            if inputs.get("prompt"):
                merged["prompt"] = inputs["prompt"]
            queued.inputs = merged
            queued.save(update_fields=["inputs"])
            return queued
        turn = Turn.objects.create(
            agent=agent, task=task, trigger=trigger, requested_by=requested_by, inputs=inputs
        )
        transaction.on_commit(lambda: enqueue_turn(turn.pk))
        transaction.on_commit(lambda: events.turn_changed(turn.pk, turn=turn))
        return turn


@transaction.atomic
def ask_agent(*, membership: Membership, agent: Agent, task: Task, prompt: str = "") -> Turn:
    """The "Ask <agent>" button."""
    _require_editor(membership)
    _require_same_workspace(membership, agent, task)
    if not agent.is_active or not agent.ask_button:
        raise ValidationError(f"{agent.name} cannot be asked right now.")
    prompt = prompt.strip()
    if len(prompt) > TEXT_MAX:
        raise ValidationError({"prompt": f"Keep the request under {TEXT_MAX:,} characters."})
    _join_task(agent, task)
    return start_turn(
        agent=agent,
        task=task,
        trigger=Trigger.ASK,
        requested_by=membership.user,
        inputs={"prompt": prompt} if prompt else {},
    )


def handle_human_message(*, message: Message) -> list[Turn]:
    """Called by ``post_message`` inside its transaction: start the turns it triggers."""
    if message.kind != Message.Kind.HUMAN:
        return []  # agents never trigger each other
    task = message.task
    mentioned = {name.lower() for name in MENTION_RE.findall(message.body)}
    turns = []
    candidates = Agent.objects.filter(workspace_id=task.workspace_id, is_active=True).annotate(
        on_task=Exists(Agent.tasks.through.objects.filter(agent_id=OuterRef("pk"), task=task))
    )
    for agent in candidates:
        if agent.on_mention and agent.name.lower() in mentioned:
            _join_task(agent, task, on_task=agent.on_task)  # known from the query above
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
    from agents.jobs import document_idle_job

    delay = int(getattr(settings, "AGENTS_IDLE_DOCUMENT_SECONDS", 30))
    for task_id in sorted(watched):
        args = (task_id, latest_updates[task_id])
        transaction.on_commit(partial(document_idle_job.apply_async, args, countdown=delay))


def document_edited(*, task_id: int, update_id: int) -> None:
    """One task's edit (see ``documents_edited``)."""
    documents_edited(latest_updates={task_id: update_id})


@transaction.atomic
def start_idle_turns(*, task_id: int, update_id: int) -> list[Turn]:
    """The document has had no edit since ``update_id``: start the watching agents' turns."""
    from collab.tasks.models import DocumentUpdate

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


@transaction.atomic
def cancel_turn(*, membership: Membership, turn: Turn) -> Turn:
    """The Stop button. The worker notices within a quarter of a second and stops."""
    _require_editor(membership)
    _require_same_workspace(membership, turn.task)
    locked = Turn.objects.select_for_update(of=("self",)).select_related("agent").get(pk=turn.pk)
    if locked.status not in (TurnStatus.QUEUED, TurnStatus.RUNNING, TurnStatus.WAITING):
        return locked
    locked.status = TurnStatus.CANCELLED
    locked.error = f"Stopped by {membership.user.get_username()}."
    locked.finished_at = timezone.now()
    locked.lease_expires_at = None
    locked.save(update_fields=["status", "error", "finished_at", "lease_expires_at"])
    for question in Question.objects.filter(turn=locked, status=Question.Status.OPEN):
        question.status = Question.Status.WITHDRAWN
        question.save(update_fields=["status"])
        transaction.on_commit(partial(events.question_changed, question.pk))
    transaction.on_commit(lambda: events.turn_changed(locked.pk, turn=locked))
    enqueue_next_turn(agent_id=locked.agent_id, task_id=locked.task_id)
    return locked


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
    note = _post_agent_message(
        task_id=turn.task_id,
        author_name=turn.agent.name,
        body=f"{turn.agent.name} could not finish this turn: {error[:500]}",
        kind=Message.Kind.SYSTEM,
    )
    transaction.on_commit(lambda: broadcast.chat_message(note.pk))
    transaction.on_commit(lambda: events.turn_changed(turn_id, turn=turn))
    enqueue_next_turn(agent_id=turn.agent_id, task_id=turn.task_id)


# --- Actions ----------------------------------------------------------------------------------


def memory_subject(*, turn: Turn, person: str) -> User | None:
    """Who a ``remember`` action may be about: a member of the task's workspace who is present
    in this conversation (wrote in its chat, or asked for this turn). Never anyone else."""
    name = person.strip().lstrip("@")
    if not name:
        return None
    member = (
        Membership.objects.filter(workspace_id=turn.task.workspace_id, user__username__iexact=name)
        .select_related("user")
        .first()
    )
    if member is None:
        return None
    present = member.user_id == turn.requested_by_id or (
        Message.objects.filter(task_id=turn.task_id, author_id=member.user_id).exists()
    )
    return member.user if present else None


def _memory_problem(*, subject: User | None, payload: dict[str, Any]) -> str | None:
    """Why a ``remember`` about ``subject`` (``memory_subject``) must be refused, or None."""
    from agents.memory import services as memory

    if subject is None:
        return "the person is not someone present in this task"
    try:
        memory.check_proposal(
            text=str(payload.get("text", "")),
            key=str(payload.get("key", "")),
            value=str(payload.get("value", "")),
        )
    except ValidationError as exc:
        return "; ".join(exc.messages)[:300]
    return None


def validate_action(*, turn: Turn, kind: str, payload: dict[str, Any]) -> str | None:
    """Why an action must be refused, or ``None``. Actions only ever touch ``turn.task`` (and a
    ``remember`` only someone present in it)."""
    text = payload.get("text", "").strip()
    needs_text = (ActionKind.REPLY, ActionKind.ASK, ActionKind.NOTE, ActionKind.REMEMBER)
    if kind in needs_text and not text:
        return "empty text"
    if kind == ActionKind.REMEMBER:
        subject = memory_subject(turn=turn, person=str(payload.get("person", "")))
        return _memory_problem(subject=subject, payload=payload)
    if kind in (ActionKind.SUGGEST, ActionKind.EDIT):
        find, replace = payload.get("find", ""), payload.get("replace", "")
        if not find and not replace.strip():
            return "an empty change"
        if find == replace:
            return "the change changes nothing"
        document = Document.objects.filter(task=turn.task_id).only("text").first()
        if find and (document is None or find not in document.text):
            return "the text to replace is not in the document"
    return None


def _post_agent_message(*, task_id: int, author_name: str, body: str, kind: str) -> Message:
    body = body.strip()[: settings.CHAT_MESSAGE_MAX_CHARS]
    message = Message.objects.create(task_id=task_id, kind=kind, author_name=author_name, body=body)
    Task.objects.filter(pk=task_id).update(updated_at=message.created_at)
    return message


def _unified_diff(before: str, after: str) -> str:
    lines = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile="document",
        tofile="suggested",
        n=1,
    )
    return "".join(lines)[:20_000]


def _changed_text(text: str, find: str, replace: str) -> str | None:
    """``text`` with the first ``find`` replaced (or ``replace`` appended); None if gone."""
    if not find:
        return text + replace
    if find not in text:
        return None
    return text.replace(find, replace, 1)


def _edit_document(
    *, task_id: int, find: str, replace: str, author_label: str, author: User | None
) -> dict[str, Any] | None:
    """Replace ``find`` (or append) in the live document as a minimal CRDT diff.

    The co-editing service reads the latest persisted CRDT state, not ``Document.text`` (which
    may lag the update log by one batch), so concurrent typing is never reverted.
    Returns None when ``find`` is no longer in the document.
    """
    task = Task.objects.get(pk=task_id)
    edit = documents.replace_in_document(
        task=task, find=find, replace=replace, author_label=author_label, author=author
    )
    if edit is None:
        return None
    return {"update_id": edit.update_id, "operations": edit.operations}


def _agent_label(turn: Turn) -> str:
    return f"{turn.agent.name} (agent, turn {turn.pk})"


def _direct_edit(*, turn: Turn, find: str, replace: str) -> dict[str, Any] | None:
    """Edit the live document as the agent (a CRDT peer), attributed to the agent and turn."""
    return _edit_document(
        task_id=turn.task_id,
        find=find,
        replace=replace,
        author_label=_agent_label(turn),
        author=None,
    )


# --- Live typing: a direct edit in several small steps -----------------------------------------

TYPING_CHUNK_CHARS = 20  # about a few words per step
TYPING_MAX_STEPS = 40
TYPING_MAX_PAUSE = 0.15  # seconds between two steps, at most


@dataclass
class _Typing:
    """A direct edit being typed: its steps (``ytext.typing_steps``), how many are applied, and
    the agent's replica (``base``: what it read plus its own steps)."""

    action_id: int
    task: Task
    turn_id: int
    author_label: str
    groups: list[list[ytext.TypingStep]]
    done: int
    base: documents.DocumentRead
    after_update_id: int
    update_ids: list[int] = field(default_factory=list)
    operations: int = 0

    def record(self) -> dict[str, Any]:
        return {
            "steps": self.groups,
            "done": self.done,
            "after_update_id": self.after_update_id,
            "update_ids": self.update_ids,
            "operations": self.operations,
        }


def _typing_seconds() -> float:
    return float(getattr(settings, "AGENTS_TYPING_SECONDS", 0))


def _plan_typing(*, action: Action, turn: Turn, find: str, replace: str) -> _Typing | None:
    """The steps of a direct edit typed live, or None to apply it in one step (typing is off,
    the edit is one step anyway, or ``find`` is no longer in the document)."""
    if _typing_seconds() <= 0:
        return None
    task = Task.objects.get(pk=turn.task_id)
    base = documents.read_document(task=task)
    new_text = _changed_text(base.text, find, replace)
    if new_text is None:
        return None
    groups = ytext.typing_steps(
        base.text, new_text, chunk_chars=TYPING_CHUNK_CHARS, max_steps=TYPING_MAX_STEPS
    )
    if len(groups) < 2:
        return None
    return _Typing(
        action_id=action.pk,
        task=task,
        turn_id=turn.pk,
        author_label=_agent_label(turn),
        groups=groups,
        done=0,
        base=base,
        after_update_id=base.update_id,
    )


def _resume_typing(*, action: Action, turn: Turn) -> _Typing | None:
    """A redelivered job finds an edit that was being typed when its worker died. If nobody
    else has written to the document since its last step, the document is exactly the agent's
    replica and the remaining steps are typed; otherwise the partial edit is reported in the
    chat (people finish or undo it from the history) and the action is closed."""
    record = action.result["typing"]
    task = Task.objects.get(pk=turn.task_id)
    others = (
        DocumentUpdate.objects.filter(document__task=task, id__gt=record["after_update_id"])
        .exclude(pk__in=record["update_ids"])
        .exists()
    )
    groups = [[(int(a), int(b), str(c)) for a, b, c in group] for group in record["steps"]]
    if not others:
        return _Typing(
            action_id=action.pk,
            task=task,
            turn_id=turn.pk,
            author_label=_agent_label(turn),
            groups=groups,
            done=int(record["done"]),
            base=documents.read_document(task=task),
            after_update_id=int(record["after_update_id"]),
            update_ids=list(record["update_ids"]),
            operations=int(record["operations"]),
        )
    action.status = Action.Status.APPLIED
    action.result = {
        "edited_directly": True,
        "interrupted": True,
        "typed_steps": record["done"],
        "steps": len(groups),
        "update_id": record["update_ids"][-1] if record["update_ids"] else None,
        "operations": record["operations"],
    }
    action.applied_at = timezone.now()
    action.save(update_fields=["status", "result", "applied_at"])
    transaction.on_commit(partial(events.edit_applied, action.pk))
    agent = turn.agent
    note = _post_agent_message(
        task_id=task.pk,
        author_name=agent.name,
        body=(
            f"{agent.name}'s edit of the document was interrupted after {record['done']} of "
            f"{len(groups)} steps, and the document changed since: it holds part of the edit. "
            "Finish or undo it from the document history."
        ),
        kind=Message.Kind.SYSTEM,
    )
    transaction.on_commit(lambda: broadcast.chat_message(note.pk))
    return None


def _type_step(typing: _Typing) -> bool:
    """Apply the next step in its own transaction, together with the progress mark on the
    action; the last step also marks the action applied. False if another delivery has moved
    on (the steps are then its business)."""
    with transaction.atomic():
        action = Action.objects.select_for_update(of=("self",)).get(pk=typing.action_id)
        record = action.result.get("typing") or {}
        if action.status != Action.Status.PENDING or record.get("done") != typing.done:
            return False
        group = typing.groups[typing.done]
        new_text = ytext.apply_steps(typing.base.text, group)
        last = typing.done + 1 == len(typing.groups)
        edit = documents.apply_text_edit(
            task=typing.task,
            new_text=new_text,
            author_label=typing.author_label,
            base=typing.base,
            record_version=last,
        )
        typing.base = documents.next_base(typing.base, edit, text=new_text)
        typing.done += 1
        typing.operations += edit.operations
        if edit.update_id is not None:
            typing.update_ids.append(edit.update_id)
        if last:
            action.status = Action.Status.APPLIED
            action.applied_at = timezone.now()
            action.result = {
                "edited_directly": True,
                "update_id": typing.update_ids[-1] if typing.update_ids else None,
                "update_ids": typing.update_ids,
                "operations": typing.operations,
                "steps": len(typing.groups),
            }
            transaction.on_commit(partial(events.edit_applied, action.pk))
        else:
            action.result = {"typing": typing.record()}
        action.save(update_fields=["status", "result", "applied_at"])
    start, _end, insert = group[-1]
    presence.move_cursor(typing.turn_id, state=typing.base.state, index=start + len(insert))
    return True


def _type(typing: _Typing) -> None:
    """Type the remaining steps, pausing between them (``AGENTS_TYPING_SECONDS`` in all)."""
    pause = min(TYPING_MAX_PAUSE, _typing_seconds() / max(1, len(typing.groups) - 1))
    first = True
    while typing.done < len(typing.groups):
        if not first and pause > 0:
            time.sleep(pause)
        first = False
        if not _type_step(typing):
            return


def apply_action(*, idempotency_key: str) -> None:
    """Apply one stored action at most once (its mark is written in the same transaction).

    A direct edit that is typed live (``AGENTS_TYPING_SECONDS``) is the exception: its steps
    are stored on the action first, then each step commits with its progress mark, and the last
    one marks the action applied (a redelivery resumes or reports it: ``_resume_typing``).
    """
    typing: _Typing | None = None
    with transaction.atomic():
        action = (  # one statement locks the action and its turn
            Action.objects.select_for_update(of=("self", "turn"))
            .select_related("turn", "turn__agent")
            .filter(idempotency_key=idempotency_key)
            .first()
        )
        if action is None or action.status != Action.Status.PENDING:
            return
        turn = action.turn
        if turn.status != TurnStatus.RUNNING:
            return
        if action.result.get("typing", {}).get("done"):
            typing = _resume_typing(action=action, turn=turn)
        else:
            typing = _apply_locked(action=action, turn=turn)
    if typing is not None:
        _type(typing)


# Actions whose whole effect is rows of this database (and events on commit).
_APPLIED_WITH_DECISION = (ActionKind.REPLY, ActionKind.NOTE, ActionKind.FINISH)


def apply_with_decision(*, turn: Turn, actions: list[Action]) -> None:
    """Called by the turn engine in the transaction that stores a decision, whose conditional
    UPDATE locks the running turn, before the actions are inserted. The leading actions whose
    whole effect is rows of this database (a reply, a note, finish) are applied there and then,
    so they are stored already applied: one transaction, so still at most once, and a turn
    that only replies needs no second one. Skipped actions are passed over. The rest stay
    pending, in order, for ``apply_action`` after the commit."""
    for action in actions:
        if action.status == Action.Status.SKIPPED:
            continue
        if action.kind not in _APPLIED_WITH_DECISION:
            return
        _apply_locked(action=action, turn=turn, save=False)


def _apply_locked(*, action: Action, turn: Turn, save: bool = True) -> _Typing | None:
    """Apply a pending action (the caller holds the locks); a direct edit to be typed live is
    only planned here, and returned for typing after the commit. ``save=False``: the caller
    inserts the action afterwards (``apply_with_decision``; only for its kinds)."""
    agent = action.turn.agent
    payload = action.payload
    text = payload.get("text", "").strip()
    result: dict[str, Any] = {}
    if action.kind == ActionKind.REPLY:
        message = _post_agent_message(
            task_id=turn.task_id, author_name=agent.name, body=text, kind=Message.Kind.AGENT
        )
        result["message_id"] = message.pk
        transaction.on_commit(lambda: broadcast.chat_message(message.pk, message=message))
    elif action.kind == ActionKind.ASK:
        question_text = text if text.endswith("?") else f"{text}?"
        question = Question.objects.create(
            task_id=turn.task_id, agent=agent, turn=turn, text=question_text
        )
        message = _post_agent_message(
            task_id=turn.task_id,
            author_name=agent.name,
            body=question_text,
            kind=Message.Kind.AGENT,
        )
        result.update(question_id=question.pk, message_id=message.pk)
        transaction.on_commit(lambda: broadcast.chat_message(message.pk))
        transaction.on_commit(lambda: events.question_changed(question.pk, created=True))
        schedule_question_timeout(question=question, minutes=agent.question_timeout_minutes)
    elif action.kind == ActionKind.NOTE:
        note = AgentNote.objects.create(
            agent=agent, task_id=turn.task_id, turn=turn, text=text[:2000]
        )
        result["note_id"] = note.pk
        transaction.on_commit(lambda: events.note_added(note.pk))
    elif action.kind in (ActionKind.SUGGEST, ActionKind.EDIT):
        find, replace = payload.get("find", ""), payload.get("replace", "")
        edited = None
        if action.kind == ActionKind.EDIT and agent.mode == AgentMode.MAY_EDIT:
            typing = _plan_typing(action=action, turn=turn, find=find, replace=replace)
            if typing is not None:
                action.result = {"typing": typing.record()}
                action.save(update_fields=["result"])
                return typing
            edited = _direct_edit(turn=turn, find=find, replace=replace)
        if edited is not None:
            result.update(edited, edited_directly=True)
            transaction.on_commit(partial(events.edit_applied, action.pk))
        else:
            document = Document.objects.filter(task_id=turn.task_id).first()
            before = document.text if document else ""
            after = _changed_text(before, find, replace)
            suggestion = Suggestion.objects.create(
                task_id=turn.task_id,
                agent=agent,
                turn=turn,
                find=find,
                replace=replace,
                rationale=text,
                diff=_unified_diff(before, after) if after is not None else "",
            )
            result["suggestion_id"] = suggestion.pk
            if action.kind == ActionKind.EDIT:
                result["as_suggestion"] = True
            transaction.on_commit(lambda: events.suggestion_changed(suggestion.pk, created=True))
    elif action.kind == ActionKind.REMEMBER:
        subject = memory_subject(turn=turn, person=str(payload.get("person", "")))
        problem = _memory_problem(subject=subject, payload=payload)
        if problem is not None:  # e.g. the person left the workspace since the decision
            action.status = Action.Status.SKIPPED
            action.detail = problem
            action.save(update_fields=["status", "detail"])
            return None
        assert subject is not None  # no problem: someone present
        result.update(_remember(turn=turn, subject=subject, payload=payload))
    action.status = Action.Status.APPLIED
    action.result = result
    action.applied_at = timezone.now()
    if save:
        action.save(update_fields=["status", "result", "applied_at"])
    return None


def _remember(*, turn: Turn, subject: User, payload: dict[str, Any]) -> dict[str, Any]:
    """An agent's ``remember``: proposed through the memory service, so the person's settings
    decide (memory off: ignored; review first: waits in their inbox; else reconciled now)."""
    from agents.memory import services as memory
    from agents.memory.extractors import Proposal
    from agents.memory.models import Source

    outcome = memory.propose(
        owner=subject,
        proposal=Proposal(
            text=str(payload.get("text", "")),
            key=str(payload.get("key", "")),
            value=str(payload.get("value", "")),
            confidence=memory.AGENT_CONFIDENCE,
        ),
        provenance=memory.Provenance(
            source_kind=Source.AGENT, task_id=turn.task_id, turn_id=turn.pk, person_id=subject.pk
        ),
    )
    result: dict[str, Any] = {"memory": outcome.action, "person_id": subject.pk}
    if outcome.item is not None:
        result["memory_item_id"] = outcome.item.pk
    if outcome.candidate is not None:
        result["memory_candidate_id"] = outcome.candidate.pk
    return result


# --- Questions nobody answers in time ----------------------------------------------------------


def schedule_question_timeout(*, question: Question, minutes: float) -> None:
    """On commit, enqueue the check that resumes the agent if the question is still open after
    ``minutes`` (0: the agent waits for an answer)."""
    if minutes <= 0:
        return
    from agents.jobs import question_timeout_job

    question_id = question.pk
    transaction.on_commit(
        lambda: question_timeout_job.apply_async((question_id,), countdown=int(minutes * 60))
    )


@transaction.atomic
def expire_question(*, question_id: int) -> Turn | None:
    """The question's time is up: if it is still open, mark it expired and resume the agent
    with a turn that may not ask again and goes ahead on its best guess. A late, duplicate or
    early delivery changes nothing (an early one, after the timeout was raised, re-schedules)."""
    question = (
        Question.objects.select_for_update(of=("self",))
        .select_related("agent", "task")
        .filter(pk=question_id)
        .first()
    )
    if question is None or question.status != Question.Status.OPEN:
        return None
    minutes = question.agent.question_timeout_minutes
    if minutes <= 0:
        return None  # switched to "wait for an answer" since it was asked
    due = question.created_at + timedelta(minutes=minutes)
    now = timezone.now()
    if due > now:
        schedule_question_timeout(question=question, minutes=(due - now).total_seconds() / 60)
        return None
    question.status = Question.Status.EXPIRED
    question.expired_at = now
    question.save(update_fields=["status", "expired_at"])
    if question.turn_id is not None:
        waiting = Turn.objects.select_for_update(of=("self",)).filter(
            pk=question.turn_id, status=TurnStatus.WAITING
        )
        if waiting.update(status=TurnStatus.DONE, finished_at=now):
            transaction.on_commit(partial(events.turn_changed, question.turn_id))
    transaction.on_commit(partial(events.question_changed, question.pk))
    return start_turn(
        agent=question.agent,
        task=question.task,
        trigger=Trigger.TIMEOUT,
        inputs={"question_id": question.pk, "timed_out": True, "minutes": minutes},
    )


def prepare_assumption(*, turn: Turn) -> Assumption | None:
    """Before a timed-out turn acts: remember the document as it is, for Undo (once). Any
    other turn has no assumption: no query, no transaction."""
    if turn.trigger != Trigger.TIMEOUT:
        return None
    with transaction.atomic():
        existing = Assumption.objects.filter(turn=turn).first()
        if existing is not None:
            return existing
        question = Question.objects.get(pk=turn.inputs["question_id"])
        version = documents.record_document_version(task=turn.task)
        return Assumption.objects.create(
            task_id=turn.task_id,
            agent_id=turn.agent_id,
            question=question,
            turn=turn,
            version_before=version,
            minutes=int(turn.inputs.get("minutes") or turn.agent.question_timeout_minutes),
        )


def _assumption_text(turn: Turn, assumption: Assumption) -> str:
    stated = str((turn.policy_decision or {}).get("assumption") or "").strip()
    if not stated:
        stated = f"I assumed my best guess for “{assumption.question.text}” and went ahead."
    return f"{stated} (no answer within {assumption.minutes} min)"


@transaction.atomic
def announce_assumption(*, turn_id: int) -> Assumption | None:
    """After a timed-out turn acted: post the visible "I assumed X" message (once)."""
    assumption = (
        Assumption.objects.select_for_update(of=("self",))
        .select_related("question", "turn", "agent")
        .filter(turn_id=turn_id)
        .first()
    )
    if assumption is None or assumption.message_id is not None:
        return assumption
    text = _assumption_text(assumption.turn, assumption)
    message = _post_agent_message(
        task_id=assumption.task_id,
        author_name=assumption.agent.name,
        body=text,
        kind=Message.Kind.AGENT,
    )
    assumption.message = message
    assumption.text = text
    assumption.save(update_fields=["message", "text"])
    transaction.on_commit(partial(events.assumption_message, assumption.pk))
    return assumption


def undo_assumption(*, membership: Membership, assumption: Assumption) -> Assumption:
    """Undo: the document goes back to how it was before the timed-out turn (a new edit by
    this person, through ``restore_document_version``; history keeps everything), and the
    question is open again, waiting for an answer (it does not time out a second time)."""
    _require_editor(membership)
    _require_same_workspace(membership, assumption.task)
    with transaction.atomic():
        locked = (
            Assumption.objects.select_for_update(of=("self",))
            .select_related("question", "agent")
            .get(pk=assumption.pk)
        )
        if locked.status != Assumption.Status.ACTIVE:
            raise ValidationError("This assumption has already been undone.")
        edited = Action.objects.filter(
            turn_id=locked.turn_id, kind=ActionKind.EDIT, status=Action.Status.APPLIED
        ).exists()
        if edited and locked.version_before_id is not None:
            documents.restore_document_version(
                membership=membership, task=locked.task, version_id=locked.version_before_id
            )
        locked.status = Assumption.Status.UNDONE
        locked.undone_by = membership.user
        locked.undone_at = timezone.now()
        locked.save(update_fields=["status", "undone_by", "undone_at"])
        question = Question.objects.select_for_update(of=("self",)).get(pk=locked.question_id)
        if question.status == Question.Status.EXPIRED:
            question.status = Question.Status.OPEN
            question.expired_at = None
            question.save(update_fields=["status", "expired_at"])
            transaction.on_commit(partial(events.question_changed, question.pk))
        note = _post_agent_message(
            task_id=locked.task_id,
            author_name=locked.agent.name,
            body=(
                f"{membership.user.get_username()} undid {locked.agent.name}'s assumption"
                + (" and its document changes" if edited else "")
                + f"; the question is open again: {question.text}"
            ),
            kind=Message.Kind.SYSTEM,
        )
        transaction.on_commit(partial(broadcast.chat_message, note.pk))
        transaction.on_commit(partial(events.assumption_message, locked.pk))
    return locked


# --- People answering agents ------------------------------------------------------------------


def accept_suggestion(
    *, membership: Membership, suggestion: Suggestion, text: str | None = None
) -> Suggestion:
    """Apply the suggestion, or the person's edited version of it, to the document.

    A suggestion whose text is no longer in the document is marked stale and refused.
    """
    _require_editor(membership)
    _require_same_workspace(membership, suggestion.task)
    with transaction.atomic():
        locked = (
            Suggestion.objects.select_for_update(of=("self",))
            .select_related("agent")
            .get(pk=suggestion.pk)
        )
        if locked.status != Suggestion.Status.PROPOSED:
            raise ValidationError("This suggestion has already been decided.")
        replacement = locked.replace if text is None else text
        if len(replacement) > TEXT_MAX * 4:
            raise ValidationError({"text": "That change is too long."})
        applied = _edit_document(
            task_id=locked.task_id,
            find=locked.find,
            replace=replacement,
            author_label=(
                f"{membership.user.get_username()} (accepted {locked.agent.name}'s suggestion)"
            ),
            author=membership.user,
        )
        locked.decided_by = membership.user
        locked.decided_at = timezone.now()
        if applied is None:
            locked.status = Suggestion.Status.STALE
        else:
            edited = replacement != locked.replace
            locked.status = Suggestion.Status.EDITED if edited else Suggestion.Status.ACCEPTED
            locked.final_text = replacement
        locked.save(update_fields=["status", "final_text", "decided_by", "decided_at"])
        transaction.on_commit(lambda: events.suggestion_changed(locked.pk))
    if locked.status == Suggestion.Status.STALE:
        raise ValidationError("The document no longer contains the text this suggestion changes.")
    return locked


@transaction.atomic
def reject_suggestion(*, membership: Membership, suggestion: Suggestion) -> Suggestion:
    _require_editor(membership)
    _require_same_workspace(membership, suggestion.task)
    locked = Suggestion.objects.select_for_update(of=("self",)).get(pk=suggestion.pk)
    if locked.status != Suggestion.Status.PROPOSED:
        raise ValidationError("This suggestion has already been decided.")
    locked.status = Suggestion.Status.REJECTED
    locked.decided_by = membership.user
    locked.decided_at = timezone.now()
    locked.save(update_fields=["status", "decided_by", "decided_at"])
    transaction.on_commit(lambda: events.suggestion_changed(locked.pk))
    return locked


@transaction.atomic
def answer_question(*, membership: Membership, question: Question, answer: str) -> Question:
    """Answer a question card in place; the agent resumes with a new turn."""
    _require_editor(membership)
    _require_same_workspace(membership, question.task)
    answer = answer.strip()
    if not answer:
        raise ValidationError({"answer": "Write an answer first."})
    if len(answer) > TEXT_MAX:
        raise ValidationError({"answer": f"Keep the answer under {TEXT_MAX:,} characters."})
    locked = (
        Question.objects.select_for_update(of=("self",))
        .select_related("agent", "task")
        .get(pk=question.pk)
    )
    if not locked.can_be_answered:
        raise ValidationError("This question is no longer open.")
    locked.status = Question.Status.ANSWERED
    locked.answer = answer
    locked.answered_by = membership.user
    locked.answered_at = timezone.now()
    locked.save(update_fields=["status", "answer", "answered_by", "answered_at"])
    if locked.turn_id is not None:
        waiting = Turn.objects.select_for_update(of=("self",)).filter(
            pk=locked.turn_id, status=TurnStatus.WAITING
        )
        if waiting.update(status=TurnStatus.DONE, finished_at=timezone.now()):
            transaction.on_commit(lambda: events.turn_changed(locked.turn_id or 0))
    transaction.on_commit(lambda: events.question_changed(locked.pk))
    start_turn(
        agent=locked.agent,
        task=locked.task,
        trigger=Trigger.ANSWER,
        requested_by=membership.user,
        inputs={"question_id": locked.pk},
    )
    return locked


def model_profiles() -> list[ModelProfile]:
    return list(ModelProfile.objects.order_by("name"))


# --- Feedback on agent work -------------------------------------------------------------------


def _feedback_row(*, membership: Membership, target: FeedbackTarget) -> Feedback:
    """The person's row for this target, locked (created, empty, when missing)."""
    field = FEEDBACK_TARGET_FIELDS[target.kind]
    rows = Feedback.objects.select_for_update(of=("self",)).filter(
        user=membership.user, target_kind=target.kind, **{field: target.obj.pk}
    )
    row = rows.first()
    if row is not None:
        return row
    try:
        with transaction.atomic():
            return Feedback.objects.create(
                user=membership.user,
                workspace_id=target.task.workspace_id,
                task=target.task,
                turn_id=target.turn_id,
                target_kind=target.kind,
                **{field: target.obj.pk},
            )
    except IntegrityError:  # the same person's other tab got there first
        return rows.get()


def record_feedback(
    *,
    membership: Membership,
    target: FeedbackTarget,
    rating: str | None = None,
    toggle: bool = False,
    comment: str | None = None,
    unnecessary: bool | None = None,
) -> Feedback:
    """Thumbs up/down, a comment, or "this question was unnecessary" on one piece of agent work.

    Any member may give feedback, viewers included: it changes nothing in the task, only what
    review shows and what a learning policy learns. Arguments left as ``None`` keep their
    stored value; ``rating=""`` clears the rating, and with ``toggle`` giving the rating the
    row already has clears it (the thumb buttons). One row per (person, target), kept even when
    emptied so that the policy learns from each person's first opinion once
    (``agents/learning.py``).
    """
    _require_same_workspace(membership, target.task)
    errors: dict[str, str] = {}
    if rating is not None and rating not in ("", *Feedback.Rating.values):
        errors["rating"] = "Rate with up or down (or nothing to clear the rating)."
    if comment is not None:
        comment = comment.strip()
        if len(comment) > FEEDBACK_COMMENT_MAX:
            errors["comment"] = f"Keep the comment under {FEEDBACK_COMMENT_MAX:,} characters."
    if unnecessary and target.kind != Feedback.TargetKind.QUESTION:
        errors["unnecessary"] = "Only a question can be marked unnecessary."
    if rating is None and comment is None and unnecessary is None:
        errors["rating"] = "Give a rating, a comment or mark the question unnecessary."
    if errors:
        raise ValidationError(errors)
    with transaction.atomic():
        row = _feedback_row(membership=membership, target=target)
        if rating is not None:
            row.rating = "" if toggle and row.rating == rating else rating
        if comment is not None:
            row.comment = comment
        if unnecessary is not None:
            row.unnecessary_question = unnecessary
        row.save(update_fields=["rating", "comment", "unnecessary_question", "updated_at"])
        learn_from_feedback(row)
        transaction.on_commit(
            partial(events.feedback_changed, target.kind, target.obj.pk, target.task.pk)
        )
    return row
