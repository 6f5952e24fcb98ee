"""Live agent events for every open page of a task.

Each event is built once (a JSON payload for API clients and HTML fragments with out-of-band
swaps for browsers, one for editors and one for viewers) and published through
``collab.realtime.broadcast``. Services call these from ``transaction.on_commit``; the turn
engine calls ``stream`` directly while a reply is being written.
"""

from __future__ import annotations

from typing import Any

from django.template.loader import render_to_string

from agents.models import Action, AgentNote, Assumption, Question, Suggestion, Turn
from agents.selectors import (
    FeedbackWidget,
    assumption_payload,
    feedback_widget,
    task_agent_cards,
    task_plan,
)
from collab.realtime import broadcast
from collab.tasks.models import Task


def _empty_widget(kind: str, target_id: int, task_id: int) -> FeedbackWidget:
    return FeedbackWidget(kind=kind, target_id=target_id, task_id=task_id)


def turn_payload(turn: Turn) -> dict[str, Any]:
    return {
        "type": "agent.turn",
        "turn_id": turn.pk,
        "agent_id": turn.agent_id,
        "agent": turn.agent.name,
        "task_id": turn.task_id,
        "status": turn.status,
        "status_label": turn.get_status_display(),
        "trigger": turn.trigger,
        "model": turn.model_label,
        "embedded": turn.is_embedded,
        "error": turn.error,
    }


def _publish(task_id: int, payload: dict[str, Any], template: str, context: dict[str, Any]) -> None:
    html = render_to_string(template, {**context, "can_edit": True})
    html_readonly = render_to_string(template, {**context, "can_edit": False})
    broadcast.agent_event(task_id, payload=payload, html=html, html_readonly=html_readonly)


def turn_changed(turn_id: int, *, turn: Turn | None = None) -> None:
    """``turn``: the committed row, when the caller has it loaded (saves a query)."""
    if turn is None:
        turn = Turn.objects.select_related("agent").filter(pk=turn_id).first()
    if turn is None:
        return
    _publish(
        turn.task_id,
        turn_payload(turn),
        "agents/_turn_oob.html",
        {"agent": turn.agent, "turn": turn, "task_id": turn.task_id},
    )


def task_agents_changed(task_id: int) -> None:
    """An agent joined (or left) the task: open pages get its card (status, stream, Ask) before
    any event of its turn, which they could not show without it."""
    task = Task.objects.filter(pk=task_id).first()
    if task is None:
        return
    panel = task_agent_cards(task)
    payload = {
        "type": "agent.task_agents",
        "task_id": task_id,
        "agents": [row.agent.name for row in panel["rows"]],
    }
    context = {"task": task, "panel": panel, "oob": True}
    _publish(task_id, payload, "agents/_agent_cards_oob.html", context)


def stream(turn: Turn, text: str, delta: str) -> None:
    """A batch of reply text: every page shows the whole text so far (late pages catch up)."""
    payload = {
        "type": "agent.stream",
        "turn_id": turn.pk,
        "agent_id": turn.agent_id,
        "agent": turn.agent.name,
        "task_id": turn.task_id,
        "delta": delta,
        "text": text,
    }
    html = render_to_string("agents/_stream_oob.html", {"agent_id": turn.agent_id, "text": text})
    broadcast.agent_event(turn.task_id, payload=payload, html=html, html_readonly=html)


def suggestion_changed(suggestion_id: int, *, created: bool = False) -> None:
    suggestion = (
        Suggestion.objects.select_related("agent", "proposed_by").filter(pk=suggestion_id).first()
    )
    if suggestion is None:
        return
    payload = {
        "type": "agent.suggestion",
        "suggestion_id": suggestion.pk,
        "agent": suggestion.proposer_name,
        "task_id": suggestion.task_id,
        "status": suggestion.status,
        "find": suggestion.find,
        "replace": suggestion.replace,
        "diff": suggestion.diff,
        "rationale": suggestion.rationale,
    }
    if created:
        suggestion.feedback_widget = _empty_widget("suggestion", suggestion.pk, suggestion.task_id)  # type: ignore[attr-defined]
    _publish(
        suggestion.task_id,
        payload,
        "agents/_suggestion_oob.html",
        {"suggestion": suggestion, "created": created},
    )


def question_changed(question_id: int, *, created: bool = False) -> None:
    question = (
        Question.objects.select_related("agent", "answered_by").filter(pk=question_id).first()
    )
    if question is None:
        return
    payload = {
        "type": "agent.question",
        "question_id": question.pk,
        "agent": question.agent.name,
        "task_id": question.task_id,
        "status": question.status,
        "text": question.text,
        "answer": question.answer,
    }
    if created:
        question.feedback_widget = _empty_widget("question", question.pk, question.task_id)  # type: ignore[attr-defined]
    _publish(
        question.task_id,
        payload,
        "agents/_question_oob.html",
        {"question": question, "created": created},
    )


def note_added(note_id: int) -> None:
    note = AgentNote.objects.select_related("agent").filter(pk=note_id).first()
    if note is None:
        return
    payload = {
        "type": "agent.note",
        "note_id": note.pk,
        "agent": note.agent.name,
        "task_id": note.task_id,
        "text": note.text,
    }
    _publish(note.task_id, payload, "agents/_note_oob.html", {"note": note})


def feedback_changed(kind: str, target_id: int, task_id: int) -> None:
    """Someone rated a piece of agent work: every page updates its counts (each person's own
    choice is shown by their own page, which the click's response updated)."""
    widget = feedback_widget(user=None, kind=kind, target_id=target_id, task_id=task_id)
    payload = {
        "type": "agent.feedback",
        "task_id": task_id,
        "target_kind": kind,
        "target_id": target_id,
        "up": widget.up,
        "down": widget.down,
        "unnecessary": widget.unnecessary_count,
    }
    html = render_to_string("agents/_feedback.html#feedback-counts", {"fb": widget, "oob": True})
    broadcast.agent_event(task_id, payload=payload, html=html, html_readonly=html)


def edit_applied(action_id: int, *, created: bool = True) -> None:
    """An agent edited the document directly: pages list the edit (with its feedback buttons);
    ``created=False``: the listed edit changed (it was undone) and replaces itself."""
    action = Action.objects.select_related("turn__agent").filter(pk=action_id).first()
    if action is None:
        return
    task_id = action.turn.task_id
    action.feedback_widget = _empty_widget("edit", action.pk, task_id)  # type: ignore[attr-defined]
    payload = {
        "type": "agent.edit",
        "action_id": action.pk,
        "agent": action.turn.agent.name,
        "task_id": task_id,
        "text": action.payload.get("text", ""),
        "find": action.payload.get("find", ""),
        "replace": action.payload.get("replace", ""),
        "undone_by": (action.result or {}).get("undone_by", ""),
    }
    context = {"edit": action, "created": created}
    html = render_to_string("agents/_edit_oob.html", {**context, "can_edit": True})
    readonly = render_to_string("agents/_edit_oob.html", {**context, "can_edit": False})
    broadcast.agent_event(task_id, payload=payload, html=html, html_readonly=readonly)


def assumption_message(assumption_id: int) -> None:
    """The "I assumed X" chat message, with its Undo button for editors (again, replacing the
    first one, after it was undone)."""
    assumption = Assumption.objects.select_related("undone_by").filter(pk=assumption_id).first()
    if assumption is None or assumption.message_id is None:
        return
    broadcast.chat_message(
        assumption.message_id,
        extras={
            "assumption": assumption_payload(assumption),
            "replaces": assumption.status != assumption.Status.ACTIVE,
        },
    )


def plan_changed(task_id: int) -> None:
    """The task's plan panel, re-rendered on every open page (issue 30)."""
    task = Task.objects.filter(pk=task_id).first()
    if task is None:
        return
    plan = task_plan(task=task)
    payload = {
        "type": "agent.plan",
        "task_id": task_id,
        "steps": [
            {
                "id": s.pk,
                "text": s.text,
                "assignee": s.assignee_name,
                "status": s.status,
                "decided_by": s.decided_by,
            }
            for s in (plan["steps"] if plan else [])
        ],
    }
    _publish(task_id, payload, "agents/_plan.html", {"plan": plan, "task": task, "oob": True})
