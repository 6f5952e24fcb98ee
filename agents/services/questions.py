"""Questions agents ask: people answering them, and what happens when nobody does in time (the
agent goes ahead on its best guess, an assumption people can undo)."""

from __future__ import annotations

from datetime import timedelta
from functools import partial
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from agents.models import Action, ActionKind, Assumption, Question, Trigger, Turn, TurnStatus
from agents.models.records import PolicyRecord
from agents.outbox import enqueue, events
from agents.schemas import TEXT_MAX
from agents.services import chains
from agents.services.chat import post_agent_message
from agents.services.turns import start_turn
from collab.lib.errors import Conflict
from collab.realtime import broadcast
from collab.tasks import documents
from collab.tasks.models import Message
from collab.workspaces.models import Membership
from collab.workspaces.permissions import require_editor, require_same_workspace


def schedule_question_timeout(*, question: Question, minutes: float) -> None:
    """On commit, enqueue the check that resumes the agent if the question is still open after
    ``minutes`` (0: the agent waits for an answer). A timeout longer than
    ``AGENTS_COUNTDOWN_MAX_SECONDS`` gets no countdown: the periodic sweep finds it due
    (``agents.services.sweep``), as it finds any check that was lost."""
    if minutes <= 0 or minutes * 60 > settings.AGENTS_COUNTDOWN_MAX_SECONDS:
        return
    enqueue.on_commit(enqueue.QUESTION_TIMEOUT, question.pk, countdown=int(minutes * 60))


@transaction.atomic
def expire_question(*, question_id: int) -> Turn | None:
    """The question's time is up: if it is still open, mark it expired and resume the agent
    with a turn that may not ask again and goes ahead on its best guess. A late, duplicate or
    early delivery changes nothing (an early one, after the timeout was raised, re-schedules)."""
    question = (
        Question.objects.select_for_update(of=("self",))
        .select_related("agent", "task", "turn__chain")
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
        **_in_chain(question),
    )


def _in_chain(question: Question) -> dict[str, Any]:
    """The resumed turn stays in the chain of the turn that asked (if any)."""
    asked = question.turn
    if asked is None or asked.chain_id is None:
        return {}
    return {"chain": asked.chain, "parent": asked}


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
    record = PolicyRecord.from_stored(turn.policy_decision)
    stated = record.assumption if record is not None else ""
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
    message = post_agent_message(
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
    require_editor(membership)
    require_same_workspace(membership, assumption.task)
    with transaction.atomic():
        locked = (
            Assumption.objects.select_for_update(of=("self",))
            .select_related("question", "agent")
            .get(pk=assumption.pk)
        )
        if locked.status != Assumption.Status.ACTIVE:
            raise Conflict("This assumption has already been undone.")
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
        note = post_agent_message(
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


@transaction.atomic
def answer_question(*, membership: Membership, question: Question, answer: str) -> Question:
    """Answer a question card in place; the agent resumes with a new turn."""
    require_editor(membership)
    require_same_workspace(membership, question.task)
    answer = answer.strip()
    if not answer:
        raise ValidationError({"answer": "Write an answer first."})
    if len(answer) > TEXT_MAX:
        raise ValidationError({"answer": f"Keep the answer under {TEXT_MAX:,} characters."})
    locked = (
        Question.objects.select_for_update(of=("self",))
        .select_related("agent", "task", "turn__chain")
        .get(pk=question.pk)
    )
    if not locked.can_be_answered:
        raise Conflict("This question is no longer open.")
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
        **_in_chain(locked),
    )
    chains.question_closed(question=locked)  # hops held for it start, if none other is open
    return locked
