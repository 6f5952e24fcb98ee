"""Reads of agents and their work, behind the task and workspace permission checks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.http import Http404

from agents.models import ACTIVE_STATUSES, Agent, AgentNote, Question, Suggestion, Turn
from collab.tasks.models import Task
from collab.tasks.selectors import TaskAccess
from collab.workspaces.models import Membership


@dataclass(frozen=True)
class AgentRow:
    agent: Agent
    turn: Turn | None


def list_task_agents(task: Task) -> list[AgentRow]:
    """The task's agents, each with its latest turn on this task."""
    agents = list(task.agents.select_related("model_profile").order_by("name", "id"))
    latest: dict[int, Turn] = {}
    for turn in (
        Turn.objects.filter(task=task, agent__in=agents).select_related("agent").order_by("-id")
    ):
        latest.setdefault(turn.agent_id, turn)
        if len(latest) == len(agents):
            break
    return [AgentRow(agent=a, turn=latest.get(a.pk)) for a in agents]


def task_panel(*, task: Task, membership: Membership | None) -> dict[str, Any]:
    rows = list_task_agents(task)
    on_task = {row.agent.pk for row in rows}
    addable = (
        [a for a in Agent.objects.filter(workspace_id=task.workspace_id, is_active=True)]
        if membership is not None and membership.can_edit
        else []
    )
    return {
        "rows": rows,
        "addable": [a for a in addable if a.pk not in on_task],
        "questions": list(
            Question.objects.filter(task=task).select_related("agent", "answered_by")[:10]
        ),
        "suggestions": list(
            Suggestion.objects.filter(task=task).select_related("agent", "decided_by")[:10]
        ),
        "notes": list(AgentNote.objects.filter(task=task).select_related("agent")[:10]),
        "is_owner": membership is not None and membership.is_owner,
    }


def list_workspace_agents(membership: Membership) -> list[Agent]:
    return list(
        Agent.objects.filter(workspace_id=membership.workspace_id).select_related("model_profile")
    )


def get_workspace_agent(membership: Membership, agent_id: int) -> Agent:
    agent = Agent.objects.filter(pk=agent_id, workspace_id=membership.workspace_id).first()
    if agent is None:
        raise Http404("No such agent.")
    return agent


def get_task_turn(access: TaskAccess, turn_id: int) -> Turn:
    turn = Turn.objects.select_related("agent", "task").filter(pk=turn_id, task=access.task).first()
    if turn is None:
        raise Http404("No such turn.")
    return turn


def get_task_suggestion(access: TaskAccess, suggestion_id: int) -> Suggestion:
    found = Suggestion.objects.select_related("agent", "task").filter(
        pk=suggestion_id, task=access.task
    )
    suggestion = found.first()
    if suggestion is None:
        raise Http404("No such suggestion.")
    return suggestion


def get_task_question(access: TaskAccess, question_id: int) -> Question:
    question = (
        Question.objects.select_related("agent", "task")
        .filter(pk=question_id, task=access.task)
        .first()
    )
    if question is None:
        raise Http404("No such question.")
    return question


def active_turn(agent: Agent, task: Task) -> Turn | None:
    return Turn.objects.filter(agent=agent, task=task, status__in=ACTIVE_STATUSES).first()
