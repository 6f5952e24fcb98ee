"""Actions: what a turn decided, validated when it is stored and applied at most once.

``apply_with_decision`` applies the leading replies, notes and finish in the engine's own
transaction; ``apply_action`` applies each other stored action in its own transaction with its
``applied`` mark (a direct edit typed live commits step by step: ``live_typing``).
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from agents.memory import selectors as memory_selectors
from agents.memory import services as memory
from agents.memory.extractors import Proposal
from agents.memory.models import Source
from agents.models import (
    Action,
    ActionKind,
    AgentMode,
    AgentNote,
    Question,
    Suggestion,
    Turn,
    TurnStatus,
)
from agents.outbox import events
from agents.services import chains, live_typing, questions
from agents.services.chat import post_agent_message
from agents.services.edits import changed_text, direct_edit, unified_diff
from collab.realtime import broadcast
from collab.tasks.models import Document, Message
from collab.workspaces.models import Membership

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


def apply_action(*, idempotency_key: str) -> None:
    """Apply one stored action at most once (its mark is written in the same transaction).

    A direct edit that is typed live (``AGENTS_TYPING_SECONDS``) is the exception: its steps
    are stored on the action first, then each step commits with its progress mark, and the last
    one marks the action applied (a redelivery resumes or reports it: ``resume_typing``).
    """
    typing: live_typing.Typing | None = None
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
            typing = live_typing.resume_typing(action=action, turn=turn)
        else:
            typing = _apply_locked(action=action, turn=turn)
    if typing is not None:
        live_typing.type_edit(typing)


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


def publish_agent_message(
    message: Message, *, turn_id: int, hops: list[dict[str, str]] | None = None
) -> None:
    """An agent's reply or question, live on every open page of the task; the people whose own
    remembered items the turn used see them as chips on it at once, as after a reload (each
    only theirs). Called once committed."""
    context = Turn.objects.filter(pk=turn_id).values_list("context", flat=True).first() or {}
    used = context.get("memory_item_ids") if isinstance(context, dict) else None
    chips = memory_selectors.memory_used_by_owner(used if isinstance(used, list) else [])
    broadcast.chat_message(
        message.pk,
        message=message,
        extras={"hops": hops} if hops else None,  # the agents it addressed (issue 30)
        per_user={owner: {"memory_used": items} for owner, items in chips.items()},
    )


def _apply_locked(*, action: Action, turn: Turn, save: bool = True) -> live_typing.Typing | None:
    """Apply a pending action (the caller holds the locks); a direct edit to be typed live is
    only planned here, and returned for typing after the commit. ``save=False``: the caller
    inserts the action afterwards (``apply_with_decision``; only for its kinds)."""
    agent = action.turn.agent
    payload = action.payload
    text = payload.get("text", "").strip()
    result: dict[str, Any] = {}
    if action.kind == ActionKind.REPLY:
        message = post_agent_message(
            task_id=turn.task_id, author_name=agent.name, body=text, kind=Message.Kind.AGENT
        )
        result["message_id"] = message.pk
        hops = chains.agents_addressed(turn=turn, message=message)
        transaction.on_commit(lambda: publish_agent_message(message, turn_id=turn.pk, hops=hops))
    elif action.kind == ActionKind.ASK:
        question_text = text if text.endswith("?") else f"{text}?"
        question = Question.objects.create(
            task_id=turn.task_id, agent=agent, turn=turn, text=question_text
        )
        message = post_agent_message(
            task_id=turn.task_id,
            author_name=agent.name,
            body=question_text,
            kind=Message.Kind.AGENT,
        )
        result.update(question_id=question.pk, message_id=message.pk)
        transaction.on_commit(lambda: publish_agent_message(message, turn_id=turn.pk))
        transaction.on_commit(lambda: events.question_changed(question.pk, created=True))
        questions.schedule_question_timeout(
            question=question, minutes=agent.question_timeout_minutes
        )
        chains.agents_addressed(turn=turn, message=message, asked=True)
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
            typing = live_typing.plan_typing(action=action, turn=turn, find=find, replace=replace)
            if typing is not None:
                action.result = {"typing": typing.record()}
                action.save(update_fields=["result"])
                return typing
            edited = direct_edit(turn=turn, find=find, replace=replace)
        if edited is not None:
            result.update(edited, edited_directly=True)
            transaction.on_commit(partial(events.edit_applied, action.pk))
        else:
            document = Document.objects.filter(task_id=turn.task_id).first()
            before = document.text if document else ""
            after = changed_text(before, find, replace)
            suggestion = Suggestion.objects.create(
                task_id=turn.task_id,
                agent=agent,
                turn=turn,
                find=find,
                replace=replace,
                rationale=text,
                diff=unified_diff(before, after) if after is not None else "",
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
    """An agent's ``remember``: proposed through the memory service (kept in this workspace
    only; about anyone but the requester it waits in their review inbox; otherwise the
    person's settings decide: memory off ignored, review first waits, else reconciled now)."""
    outcome = memory.propose_from_agent(
        subject=subject,
        requested_by=turn.requested_by_id,
        workspace=turn.task.workspace,
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
