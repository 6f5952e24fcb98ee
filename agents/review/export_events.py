"""Every source of exported events (chat, document versions, turns, model calls, questions,
suggestions, feedback, memory), each read with ``iterator(chunk_size=...)`` in time order, and
``iter_events``, which merges them lazily (``heapq.merge``): an export of any size holds one chunk
per source in memory."""

from __future__ import annotations

import heapq
from collections.abc import Iterator
from typing import Any

from django.db.models import Q

from agents.memory.models import MemoryHistory, Scope
from agents.models import Feedback, ModelCall, Question, Suggestion, Turn
from agents.review.export_spec import (
    CHUNK,
    Event,
    ExportSpec,
    export_event,
    iso,
    task_filter,
    timed,
)
from agents.review.models import ReviewSettings
from agents.review.privacy import exportable_memory_owners, redact_memory_lines
from agents.selectors import FEEDBACK_TARGET_FIELDS
from collab.tasks.models import DocumentVersion, Message, Task


def _messages(spec: ExportSpec) -> Iterator[Event]:
    rows = timed(Message.objects.filter(task_filter(spec, "task__")), "created_at", spec).values(
        "pk", "at", "kind", "author_id", "author_name", "body", "task_id", "task__workspace_id"
    )
    for row in rows.iterator(chunk_size=CHUNK):
        role = {"human": "user", "agent": "agent"}.get(row["kind"], "system")
        yield export_event(
            at=row["at"],
            event="message.posted",
            event_id=f"message-{row['pk']}",
            role=f"{role}_{row['author_name']}" if role != "system" else "system",
            action=f"SEND_TEAMMATE_MESSAGE(message={row['body']})",
            action_type="collaborative",
            task_id=row["task_id"],
            workspace_id=row["task__workspace_id"],
            data={"kind": row["kind"], "author_id": row["author_id"], "body": row["body"]},
        )


def _versions(spec: ExportSpec) -> Iterator[Event]:
    rows = timed(
        DocumentVersion.objects.filter(task_filter(spec, "document__task__")), "created_at", spec
    ).values(
        "pk", "at", "text", "kind", "authors", "document__task_id", "document__task__workspace_id"
    )
    for row in rows.iterator(chunk_size=CHUNK):
        authors = [a for a in row["authors"] or [] if isinstance(a, str)]
        yield export_event(
            at=row["at"],
            event="document.version",
            event_id=f"version-{row['pk']}",
            role=", ".join(authors) or "system",
            action=f"EDITOR_UPDATE(text={row['text']})",
            action_type="environment",
            task_id=row["document__task_id"],
            workspace_id=row["document__task__workspace_id"],
            data={"kind": row["kind"], "authors": authors, "text": row["text"]},
        )


def _logged_policy(decision: Any) -> dict[str, Any]:
    detail = decision.get("detail") if isinstance(decision, dict) else None
    if not isinstance(detail, dict):
        return {"policy_probabilities": None, "policy_features": None}
    return {
        "policy_probabilities": detail.get("probabilities"),
        "policy_features": detail.get("features") or None,
    }


def _turns(spec: ExportSpec) -> Iterator[Event]:
    rows = timed(Turn.objects.filter(task_filter(spec, "task__")), "created_at", spec).values(
        "pk",
        "at",
        "agent__name",
        "trigger",
        "status",
        "policy_name",
        "policy_decision",
        "decision",
        "model",
        "tokens_in",
        "tokens_out",
        "cost",
        "error",
        "finished_at",
        "task_id",
        "task__workspace_id",
        "requested_by__username",
        "parent_id",
        "chain_id",
        "hop_kind",
    )
    for row in rows.iterator(chunk_size=CHUNK):
        decision = row["policy_decision"] or {}
        yield export_event(
            at=row["at"],
            event="turn",
            event_id=f"turn-{row['pk']}",
            role=f"agent_{row['agent__name']}",
            action=f"TURN(trigger={row['trigger']})",
            action_type="collaborative",
            status="failed" if row["status"] == "failed" else "succeeded",
            task_id=row["task_id"],
            workspace_id=row["task__workspace_id"],
            data={
                "turn_id": row["pk"],
                "trigger": row["trigger"],
                "status": row["status"],
                "requested_by": row["requested_by__username"],
                # Chains (issue 30): the turn whose message addressed this agent, and how.
                "parent_turn_id": row["parent_id"],
                "chain_id": row["chain_id"],
                "hop_kind": row["hop_kind"] or None,
                "policy": row["policy_name"],
                "policy_decision": decision.get("decision") if isinstance(decision, dict) else None,
                "policy_reason": decision.get("reason") if isinstance(decision, dict) else None,
                # logged for offline evaluation (IPS): each action's probability and the
                # context features the policy decided on
                **_logged_policy(decision),
                "decision": row["decision"],
                "model": row["model"],
                "tokens_in": row["tokens_in"],
                "tokens_out": row["tokens_out"],
                "cost": str(row["cost"]),
                "error": row["error"],
                "finished_at": iso(row["finished_at"]) if row["finished_at"] else None,
            },
        )


def _model_calls(spec: ExportSpec, allow_memory: bool) -> Iterator[Event]:
    rows = timed(
        ModelCall.objects.filter(task_filter(spec, "turn__task__"), turn__isnull=False),
        "created_at",
        spec,
    ).values(
        "pk",
        "at",
        "turn_id",
        "agent__name",
        "provider",
        "model",
        "purpose",
        "messages",
        "response",
        "tokens_in",
        "tokens_out",
        "latency_ms",
        "cost",
        "error",
        "turn__task_id",
        "turn__task__workspace_id",
        "turn__context",
    )
    for row in rows.iterator(chunk_size=CHUNK):
        messages = row["messages"] or []
        response = row["response"]
        if not allow_memory:
            context = row["turn__context"] if isinstance(row["turn__context"], dict) else {}
            lines = [str(line) for line in context.get("memory", [])]
            messages = [
                {**m, "content": redact_memory_lines(str(m.get("content", "")), lines)}
                if isinstance(m, dict)
                else m
                for m in messages
            ]
            if isinstance(response, str):  # a response may echo what the prompt showed
                response = redact_memory_lines(response, lines)
        yield export_event(
            at=row["at"],
            event="model.call",
            event_id=f"call-{row['pk']}",
            role=f"agent_{row['agent__name']}",
            action=f"MODEL_CALL(purpose={row['purpose']})",
            action_type="private",
            status="failed" if row["error"] else "succeeded",
            task_id=row["turn__task_id"],
            workspace_id=row["turn__task__workspace_id"],
            data={
                "turn_id": row["turn_id"],
                "provider": row["provider"],
                "model": row["model"],
                "messages": messages,
                "response": response,
                "tokens_in": row["tokens_in"],
                "tokens_out": row["tokens_out"],
                "latency_ms": row["latency_ms"],
                "cost": str(row["cost"]),
                "error": row["error"],
            },
        )


def _questions(spec: ExportSpec) -> Iterator[Iterator[Event]]:
    base = Question.objects.filter(task_filter(spec, "task__"))
    fields = (
        "pk",
        "at",
        "agent__name",
        "text",
        "answer",
        "status",
        "turn_id",
        "task_id",
        "task__workspace_id",
        "answered_by__username",
    )

    def asked() -> Iterator[Event]:
        for row in timed(base, "created_at", spec).values(*fields).iterator(chunk_size=CHUNK):
            yield export_event(
                at=row["at"],
                event="question.asked",
                event_id=f"question-{row['pk']}",
                role=f"agent_{row['agent__name']}",
                action=f"SEND_TEAMMATE_MESSAGE(message={row['text']})",
                action_type="collaborative",
                task_id=row["task_id"],
                workspace_id=row["task__workspace_id"],
                data={"question_id": row["pk"], "turn_id": row["turn_id"], "text": row["text"]},
            )

    def answered() -> Iterator[Event]:
        for row in timed(base, "answered_at", spec).values(*fields).iterator(chunk_size=CHUNK):
            yield export_event(
                at=row["at"],
                event="question.answered",
                event_id=f"answer-{row['pk']}",
                role=f"user_{row['answered_by__username']}",
                action=f"SEND_TEAMMATE_MESSAGE(message={row['answer']})",
                action_type="collaborative",
                task_id=row["task_id"],
                workspace_id=row["task__workspace_id"],
                data={"question_id": row["pk"], "answer": row["answer"]},
            )

    yield asked()
    yield answered()


def _suggestions(spec: ExportSpec) -> Iterator[Iterator[Event]]:
    base = Suggestion.objects.filter(task_filter(spec, "task__"))
    fields = (
        "pk",
        "at",
        "agent__name",
        "proposed_by__username",
        "find",
        "replace",
        "rationale",
        "diff",
        "status",
        "final_text",
        "turn_id",
        "task_id",
        "task__workspace_id",
        "decided_by__username",
    )

    def proposed() -> Iterator[Event]:
        for row in timed(base, "created_at", spec).values(*fields).iterator(chunk_size=CHUNK):
            yield export_event(
                at=row["at"],
                event="suggestion.proposed",
                event_id=f"suggestion-{row['pk']}",
                role=(
                    f"agent_{row['agent__name']}"
                    if row["agent__name"] is not None
                    else f"user_{row['proposed_by__username']}"
                ),
                action=(
                    f"REQUEST_TEAMMATE_CONFIRM(request_id={row['pk']}, "
                    "pending_action=EDITOR_UPDATE)"
                ),
                action_type="collaborative",
                task_id=row["task_id"],
                workspace_id=row["task__workspace_id"],
                data={
                    "suggestion_id": row["pk"],
                    "turn_id": row["turn_id"],
                    "find": row["find"],
                    "replace": row["replace"],
                    "rationale": row["rationale"],
                    "diff": row["diff"],
                },
            )

    def decided() -> Iterator[Event]:
        for row in timed(base, "decided_at", spec).values(*fields).iterator(chunk_size=CHUNK):
            verb = "REJECT" if row["status"] == Suggestion.Status.REJECTED else "ACCEPT"
            yield export_event(
                at=row["at"],
                event="suggestion.decided",
                event_id=f"decision-{row['pk']}",
                role=f"user_{row['decided_by__username']}",
                action=f"{verb}_CONFIRMATION(request_id={row['pk']})",
                action_type="collaborative",
                task_id=row["task_id"],
                workspace_id=row["task__workspace_id"],
                data={
                    "suggestion_id": row["pk"],
                    "status": row["status"],
                    "final_text": row["final_text"],
                },
            )

    yield proposed()
    yield decided()


def _feedback(spec: ExportSpec) -> Iterator[Event]:
    """Feedback rows as they stand now (one event per person and target, at its last change);
    a rating that was clicked away with nothing else left is not exported."""
    rows = timed(
        Feedback.objects.filter(task_filter(spec, "task__")).exclude(
            rating="", comment="", unnecessary_question=False
        ),
        "updated_at",
        spec,
    ).values(
        "pk",
        "at",
        "created_at",
        "target_kind",
        "message_id",
        "question_id",
        "suggestion_id",
        "action_id",
        "turn_id",
        "rating",
        "comment",
        "unnecessary_question",
        "learned_reward",
        "user__username",
        "task_id",
        "workspace_id",
    )
    for row in rows.iterator(chunk_size=CHUNK):
        target_id = row[FEEDBACK_TARGET_FIELDS[row["target_kind"]]]
        yield export_event(
            at=row["at"],
            event="feedback.given",
            event_id=f"feedback-{row['pk']}",
            role=f"user_{row['user__username']}",
            action=(
                f"FEEDBACK(target={row['target_kind']}:{target_id}, "
                f"rating={row['rating'] or 'none'}, "
                f"unnecessary_question={str(row['unnecessary_question']).lower()})"
            ),
            action_type="collaborative",
            task_id=row["task_id"],
            workspace_id=row["workspace_id"],
            data={
                "feedback_id": row["pk"],
                "target_kind": row["target_kind"],
                "target_id": target_id,
                "turn_id": row["turn_id"],
                "rating": row["rating"] or None,
                "comment": row["comment"],
                "unnecessary_question": row["unnecessary_question"],
                "learned_reward": row["learned_reward"],
                "first_given_at": iso(row["created_at"]),
            },
        )


def _memory(spec: ExportSpec, settings: ReviewSettings | None) -> Iterator[Event]:
    task_ids = Task.objects.filter(task_filter(spec, "")).values("id")
    history = MemoryHistory.objects.filter(item__source_task_id__in=task_ids)
    personal_owners = (
        history.exclude(item__scope=Scope.TEAM).values_list("item__owner_id", flat=True).distinct()
    )
    allowed = exportable_memory_owners(settings, personal_owners) if settings is not None else set()
    history = history.filter(Q(item__scope=Scope.TEAM) | Q(item__owner_id__in=allowed))
    rows = timed(history, "created_at", spec).values(
        "pk",
        "at",
        "action",
        "note",
        "snapshot",
        "item_id",
        "item__scope",
        "item__owner__username",
        "item__source_task_id",
        "item__workspace_id",
        "actor__username",
    )
    for row in rows.iterator(chunk_size=CHUNK):
        snapshot = row["snapshot"] or {}
        yield export_event(
            at=row["at"],
            event="memory.changed",
            event_id=f"memory-{row['pk']}",
            role=f"user_{row['actor__username']}" if row["actor__username"] else "system",
            action=f"MEMORY_{str(row['action']).upper()}(item={row['item_id']})",
            action_type="private",
            task_id=row["item__source_task_id"],
            workspace_id=row["item__workspace_id"],
            data={
                "item_id": row["item_id"],
                "change": row["action"],
                "scope": row["item__scope"],
                "owner": row["item__owner__username"],
                "text": snapshot.get("text", ""),
                "key": snapshot.get("key", ""),
                "value": snapshot.get("value", ""),
                "note": row["note"],
            },
        )


def iter_events(spec: ExportSpec, settings: ReviewSettings | None) -> Iterator[Event]:
    """Every event in ``spec``, in time order."""
    allow_memory = settings is not None and settings.export_personal_memory
    sources: list[Iterator[Event]] = [
        _messages(spec),
        _versions(spec),
        _turns(spec),
        _model_calls(spec, allow_memory),
        *_questions(spec),
        *_suggestions(spec),
        _feedback(spec),
        _memory(spec, settings),
    ]
    return heapq.merge(*sources, key=lambda event: (event["timestamp"], event["event_id"]))
