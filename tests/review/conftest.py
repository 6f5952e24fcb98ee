"""Builders for review tests: agents, turns and model calls written straight to the tables
(the review pages only read them)."""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from agents.models import Action, Agent, Feedback, ModelCall, Question, Suggestion, Turn
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories


def make_agent(workspace: Workspace, name: str = "Scribe") -> Agent:
    return Agent.objects.create(workspace=workspace, name=name, policy_name="ask_once")


def make_turn(
    agent: Agent,
    task: Task,
    *,
    status: str = "done",
    trigger: str = "mention",
    decision: str = "act",
    requested_by: User | None = None,
    error: str = "",
    at: datetime | None = None,
    context: dict[str, Any] | None = None,
) -> Turn:
    turn = Turn.objects.create(
        agent=agent,
        task=task,
        trigger=trigger,
        status=status,
        requested_by=requested_by,
        policy_name="ask_once",
        policy_decision={
            "decision": decision,
            "reason": f"because {decision}",
            "detail": {"scores": {"ask": 0.4}},
        },
        decision={"actions": [{"kind": "reply", "text": "Done."}]},
        provider="fake",
        model="echo",
        tokens_in=100,
        tokens_out=20,
        cost=Decimal("0.010000"),
        error=error,
        context=context or {"memory": []},
        started_at=at,
        finished_at=at,
    )
    if at is not None:
        Turn.objects.filter(pk=turn.pk).update(created_at=at)
        turn.refresh_from_db()
    return turn


def make_call(
    turn: Turn,
    *,
    prompt: str = "Please plan the offsite",
    response: str = '{"actions": []}',
    model: str = "echo",
    error: str = "",
    cost: str = "0.010000",
    at: datetime | None = None,
    tokens_in: int = 100,
    tokens_out: int = 20,
) -> ModelCall:
    call = ModelCall.objects.create(
        turn=turn,
        agent=turn.agent,
        provider="fake",
        model=model,
        messages=[{"role": "system", "content": "You help."}, {"role": "human", "content": prompt}],
        response=response,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
        latency_ms=42,
        cost=Decimal(cost),
        error=error,
    )
    if at is not None:
        ModelCall.objects.filter(pk=call.pk).update(created_at=at)
        call.refresh_from_db()
    return call


def make_action(turn: Turn, *, kind: str = "reply", applied: bool = True) -> Action:
    return Action.objects.create(
        turn=turn,
        index=turn.actions.count(),
        kind=kind,
        payload={"text": "Done."},
        idempotency_key=f"{turn.pk}-{turn.actions.count()}",
        status=Action.Status.APPLIED if applied else Action.Status.PENDING,
    )


def make_suggestion(
    turn: Turn, *, status: str = "proposed", decided_by: User | None = None
) -> Suggestion:
    return Suggestion.objects.create(
        task=turn.task,
        agent=turn.agent,
        turn=turn,
        find="",
        replace="Day 1: arrive",
        rationale="An agenda helps.",
        diff="+Day 1: arrive",
        status=status,
        final_text="Day 1: arrive" if status != "proposed" else "",
        decided_by=decided_by,
        decided_at=timezone.now() if decided_by else None,
    )


def make_question(turn: Turn, *, answered_by: User | None = None) -> Question:
    return Question.objects.create(
        task=turn.task,
        agent=turn.agent,
        turn=turn,
        text="Which city?",
        status=Question.Status.ANSWERED if answered_by else Question.Status.OPEN,
        answer="Lisbon" if answered_by else "",
        answered_by=answered_by,
        answered_at=timezone.now() if answered_by else None,
    )


@pytest.fixture
def staff(db: None) -> User:
    user = factories.make_user("sam")
    user.is_staff = True
    user.save(update_fields=["is_staff"])
    return user


@pytest.fixture
def agent(workspace: Workspace) -> Agent:
    return make_agent(workspace)


@pytest.fixture
def other_workspace(mallory: User) -> Workspace:
    return factories.make_workspace(mallory, name="Elsewhere")


def make_feedback(
    user: User,
    target: Question | Suggestion,
    *,
    rating: str = "",
    comment: str = "",
    unnecessary: bool = False,
) -> Feedback:
    """Feedback written straight to the table (the service is tested in tests/agents)."""
    kind = "question" if isinstance(target, Question) else "suggestion"
    return Feedback.objects.create(
        user=user,
        workspace_id=target.task.workspace_id,
        task=target.task,
        turn=target.turn,
        target_kind=kind,
        **{kind: target},
        rating=rating,
        comment=comment,
        unnecessary_question=unnecessary,
    )
