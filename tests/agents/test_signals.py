"""Task templates and model signals in the turn engine (agents/signals.py)."""

from __future__ import annotations

from collections.abc import Callable

from django.contrib.auth.models import User

from agents import services, turns
from agents.models import Agent, ModelCall, Question, Trigger, Turn, TurnStatus
from collab.tasks.models import Task
from collab.tasks.services import create_task
from collab.workspaces.models import Workspace
from tests import factories


def _task(workspace: Workspace, alice: User, *, title: str, template: str = "") -> Task:
    return create_task(
        membership=factories.membership_of(workspace, alice), title=title, template=template
    )


def _turn(agent: Agent, task: Task, prompt: str) -> Turn:
    agent.tasks.add(task)
    return services.start_turn(
        agent=agent, task=task, trigger=Trigger.ASK, inputs={"prompt": prompt}
    )


def test_the_engine_gives_the_policy_the_tasks_template(
    workspace: Workspace, alice: User, make_agent: Callable[..., Agent]
) -> None:
    """The title names no template keyword: only Task.template makes it a travel plan."""
    agent = make_agent("Mira", policy_name="ask_once")
    task = _task(workspace, alice, title="Offsite in spring", template="travel_plan")
    turn = _turn(agent, task, "Sort this out for us please")

    assert turns.run_turn(turn_id=turn.pk) == TurnStatus.WAITING

    turn.refresh_from_db()
    assert turn.context["task"]["template"] == "travel_plan"
    assert turn.policy_decision["situation"]["template"] == "travel_plan"
    assert "Where are you going?" in Question.objects.get(turn=turn).text
    assert not ModelCall.objects.filter(turn=turn).exists()


def test_a_free_form_task_leaves_the_template_to_the_adapters_guess(
    workspace: Workspace, alice: User, make_agent: Callable[..., Agent]
) -> None:
    agent = make_agent("Mira", policy_name="ask_once")
    task = _task(workspace, alice, title="Offsite in spring")
    turn = _turn(agent, task, "Sort this out for us please")

    turns.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    assert turn.context["task"]["template"] == ""
    assert turn.policy_decision["situation"]["template"] is None
