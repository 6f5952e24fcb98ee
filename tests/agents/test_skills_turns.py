"""Turns on the embedded default that the built-in skills answer (issue 27): the card shows only
the skills' answer, never the small model's text first, and a turn routes its request once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents import llm
from agents.defaults import create_default_agent
from agents.engine import gather, runner
from agents.engine import understand as understand_stage
from agents.llm import fakes
from agents.models import Agent, ModelProfile, Provider, Trigger, Turn
from agents.models.turns import SKILLS_LABEL
from agents.schemas import DecisionOut
from agents.services import agents as agent_services
from agents.services import turns as turn_services
from collab.realtime import broadcast
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories

# A request none of the skills covers: the small model writes the turn's answer.
UNCOVERED = "sing us a sea shanty"


@pytest.fixture
def events(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    seen: list[dict[str, Any]] = []

    def capture(task_id: int, *, payload: dict[str, Any], html: str, html_readonly: str) -> None:
        seen.append(payload)

    monkeypatch.setattr(broadcast, "agent_event", capture)
    return seen


@pytest.fixture
def small_model(
    monkeypatch: pytest.MonkeyPatch, workspace: Workspace, alice: User
) -> Callable[[str], Agent]:
    """An agent on an embedded profile whose model is a fake that streams ``behaviour``'s answer
    slowly (no model file is loaded): what the card sees while the small model writes."""

    def build(profile: ModelProfile, **kwargs: Any) -> Any:
        return fakes.BehaviourFakeChatModel(behaviour=profile.model)

    monkeypatch.setattr(llm, "build_chat_model", build)
    monkeypatch.setattr(
        llm, "parse_decision", lambda profile, text: DecisionOut.model_validate_json(text)
    )

    def make(behaviour: str) -> Agent:
        profile = ModelProfile.objects.create(
            name=f"small-{behaviour}", provider=Provider.EMBEDDED, model=behaviour
        )
        return agent_services.create_agent(
            membership=factories.membership_of(workspace, alice),
            name="Pip",
            model_profile=profile,
        )

    return make


def _run(agent: Agent, task: Task, request: str, capture: Any) -> Turn:
    agent.tasks.add(task)
    turn = turn_services.start_turn(
        agent=agent, task=task, trigger=Trigger.ASK, inputs={"prompt": request}
    )
    with capture(execute=True):
        runner.run_turn(turn_id=turn.pk)
    turn.refresh_from_db()
    return turn


def _replies(task: Task) -> list[str]:
    return list(task.messages.filter(kind=Message.Kind.AGENT).values_list("body", flat=True))


def test_a_skills_turn_routes_its_request_once(
    monkeypatch: pytest.MonkeyPatch,
    workspace: Workspace,
    alice: User,
    task: Task,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from agents import skills

    routed: list[str] = []
    real = skills.route

    def counting(request: str) -> Any:
        routed.append(request)
        return real(request)

    for module in (skills, gather, understand_stage):
        monkeypatch.setattr(module, "route", counting)
    assistant = create_default_agent(workspace=workspace, owner=alice)
    assistant.tasks.add(task)
    task_services.post_message(
        membership=factories.membership_of(workspace, alice),
        task=task,
        body="@Assistant what could go wrong with the offsite?",
    )
    turn = Turn.objects.get(agent=assistant)

    with django_capture_on_commit_callbacks(execute=True):
        runner.run_turn(turn_id=turn.pk)

    turn.refresh_from_db()
    assert turn.model_label == SKILLS_LABEL
    assert len(routed) == 1
    assert "could go wrong" in routed[0]
