"""A task's timeline: everything that happened on it, in order, with the document text as it
stood after each event (the replay page's scrubber reads ``document_at``)."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User

from agents.memory.models import MemoryHistory, Scope
from agents.models import Feedback, Hop, Question, Suggestion, Turn
from collab.tasks.models import DocumentVersion, Task

MAX_EVENTS = 5000


@dataclass
class TimelineEvent:
    at: datetime
    order: int
    # message, version, turn, hop, question, answer, suggestion, decision, feedback, memory
    kind: str
    actor: str
    summary: str
    body: str = ""
    diff: str = ""
    link_turn: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    version_index: int = -1  # index into Timeline.versions of the document at this point


@dataclass
class Timeline:
    task: Task
    events: list[TimelineEvent]
    versions: list[str]  # document texts, oldest first; index -1 means the empty document
    truncated: bool = False


def _diff(before: str, after: str) -> str:
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile="before",
            tofile="after",
            n=1,
        )
    )


def build_timeline(task: Task, *, viewer: User) -> Timeline:
    """One query per kind of event whatever the task's size (capped at ``MAX_EVENTS`` of each
    kind)."""
    events: list[TimelineEvent] = []

    def add(at: datetime | None, order: int, **kwargs: Any) -> None:
        if at is not None:
            events.append(TimelineEvent(at=at, order=order, **kwargs))

    for message in task.messages.order_by("id")[:MAX_EVENTS]:
        add(
            message.created_at,
            0,
            kind="message",
            actor=message.author_name,
            summary=f"{message.get_kind_display()} message",
            body=message.body,
        )

    versions = list(DocumentVersion.objects.filter(document__task=task).order_by("id")[:MAX_EVENTS])
    texts: list[str] = []
    previous = ""
    for version in versions:
        texts.append(version.text)
        add(
            version.created_at,
            1,
            kind="version",
            actor=", ".join(a for a in version.authors if isinstance(a, str)) or "system",
            summary=f"Document version ({version.get_kind_display().lower()})",
            diff=_diff(previous, version.text),
            extra={"version_id": version.pk, "position": len(texts) - 1},
        )
        previous = version.text

    for turn in (
        Turn.objects.filter(task=task)
        .select_related("agent")
        .defer("context", "stream_text")
        .order_by("id")[:MAX_EVENTS]
    ):
        decision = turn.policy_decision if isinstance(turn.policy_decision, dict) else {}
        summary = (
            f"Turn ({turn.get_trigger_display().lower()}) — {turn.get_status_display().lower()}"
        )
        if turn.parent_id is not None:  # another agent's message addressed it (issue 30)
            summary += f" — {turn.hop_kind or 'hop'} from turn {turn.parent_id}"
        add(
            turn.created_at,
            2,
            kind="turn",
            actor=turn.agent.name,
            summary=summary,
            body=str(decision.get("reason", "")) if decision else "",
            link_turn=turn.pk,
            extra={
                "decision": decision.get("decision", ""),
                "policy": turn.policy_name,
                "parent_turn": turn.parent_id,
                "chain": turn.chain_id,
            },
        )

    for hop in (
        Hop.objects.filter(chain__task=task)
        .select_related("from_agent", "to_agent")
        .order_by("chain_id", "index")[:MAX_EVENTS]
    ):  # one agent's message addressing another (issue 30), in the order of its chain
        add(
            hop.created_at,
            2,
            kind="hop",
            actor=hop.from_agent.name,
            summary=f"Hop {hop.index + 1} of chain {hop.chain_id}: {hop.get_kind_display()} "
            f"→ {hop.to_agent.name}",
            body=hop.text,
            link_turn=hop.to_turn_id,
            extra={"chain": hop.chain_id, "hop": hop.index, "from_turn": hop.from_turn_id},
        )

    for question in (
        Question.objects.filter(task=task)
        .select_related("agent", "answered_by")
        .order_by("id")[:MAX_EVENTS]
    ):
        add(
            question.created_at,
            3,
            kind="question",
            actor=question.agent.name,
            summary="Asked a question",
            body=question.text,
            link_turn=question.turn_id,
        )
        who = question.answered_by.get_username() if question.answered_by else "someone"
        add(
            question.answered_at,
            4,
            kind="answer",
            actor=who,
            summary="Answered",
            body=question.answer,
        )

    for suggestion in (
        Suggestion.objects.filter(task=task)
        .select_related("agent", "proposed_by", "decided_by")
        .order_by("id")[:MAX_EVENTS]
    ):
        add(
            suggestion.created_at,
            3,
            kind="suggestion",
            actor=suggestion.proposer_name,
            summary="Suggested a change",
            body=suggestion.rationale,
            diff=suggestion.diff,
            link_turn=suggestion.turn_id,
        )
        who = suggestion.decided_by.get_username() if suggestion.decided_by else "someone"
        add(
            suggestion.decided_at,
            4,
            kind="decision",
            actor=who,
            summary=f"Suggestion {suggestion.get_status_display().lower()}",
            body=suggestion.final_text,
        )

    for feedback in (
        Feedback.objects.filter(task=task)
        .exclude(rating="", comment="", unnecessary_question=False)
        .select_related("user")
        .order_by("updated_at", "id")[:MAX_EVENTS]
    ):
        said = [
            {"up": "👍 thumbs up", "down": "👎 thumbs down"}.get(feedback.rating, ""),
            "this question was unnecessary" if feedback.unnecessary_question else "",
        ]
        add(
            feedback.updated_at,
            6,
            kind="feedback",
            actor=feedback.user.get_username(),
            summary=(
                f"Feedback on {feedback.get_target_kind_display().lower()} "
                f"#{feedback.target_id}: " + (", ".join(s for s in said if s) or "a comment")
            ),
            body=feedback.comment,
            link_turn=feedback.turn_id,
            extra={
                "rating": feedback.rating,
                "unnecessary_question": feedback.unnecessary_question,
                "target_kind": feedback.target_kind,
                "target_id": feedback.target_id,
            },
        )

    for change in (
        MemoryHistory.objects.filter(item__source_task_id=task.pk)
        .select_related("item", "item__owner", "actor")
        .order_by("created_at", "id")[:MAX_EVENTS]
    ):
        item = change.item
        private = item.scope != Scope.TEAM and item.owner_id != viewer.pk
        owner = item.owner.get_username()
        add(
            change.created_at,
            5,
            kind="memory",
            actor=change.actor.get_username() if change.actor else "system",
            summary=(
                f"{owner}'s personal memory changed (private)"
                if private
                else f"Memory {change.get_action_display().lower()} ({item.get_scope_display()})"
            ),
            body="" if private else str(change.snapshot.get("text", item.text)),
        )

    for status_change in task.status_changes.select_related("changed_by").order_by("id")[
        :MAX_EVENTS
    ]:
        add(
            status_change.changed_at,
            7,
            kind="status",
            actor=(
                status_change.changed_by.get_username() if status_change.changed_by else "someone"
            ),
            summary=(
                f"Status: {status_change.get_from_status_display().lower()} → "
                f"{status_change.get_to_status_display().lower()}"
            ),
            extra={"from": status_change.from_status, "to": status_change.to_status},
        )

    events.sort(key=lambda e: (e.at, e.order))
    # the document as it stood after each event: the latest version at or before it
    position = -1
    for event in events:
        if event.kind == "version":
            position = int(event.extra["position"])
        event.version_index = position
    truncated = len(events) >= MAX_EVENTS
    return Timeline(task=task, events=events, versions=texts, truncated=truncated)
