"""Every workspace has a working agent, and owners manage agents on a product page."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.urls import reverse

from agents import defaults
from agents.models import Agent, Trigger
from agents.policies import DEFAULT_POLICY
from collab.lib.colors import PALETTE
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from collab.workspaces.services import create_workspace
from tests import factories


def test_a_new_workspace_comes_with_its_assistant(alice: User) -> None:
    workspace = create_workspace(owner=alice, name="Lisbon offsite")

    agent = Agent.objects.get(workspace=workspace)
    assert (agent.name, agent.policy_name, agent.model_profile) == (
        "Assistant",
        DEFAULT_POLICY,
        None,  # the site's default model, whichever it is now
    )
    assert agent.is_active
    assert agent.on_mention
    assert agent.joins_new_tasks
    assert agent.created_by == alice


def test_the_owner_names_the_agent_on_creation(as_user: Any, alice: User) -> None:
    response = as_user(alice).post(
        reverse("workspaces:list"), {"name": "Lisbon", "agent_name": "Scout"}
    )

    assert response.status_code == 302
    assert list(Agent.objects.values_list("name", flat=True)) == ["Scout"]


def test_an_agent_name_mentions_cannot_reach_is_refused_in_plain_words(
    as_user: Any, alice: User
) -> None:
    response = as_user(alice).post(
        reverse("workspaces:list"), {"name": "Lisbon", "agent_name": "my helper"}
    )

    assert response.status_code == 400
    assert b"cannot be used in @mentions" in response.content
    assert not Workspace.objects.exists()  # one transaction: no workspace without its agent


def test_the_default_agent_is_on_every_new_task(alice: User) -> None:
    workspace = factories.make_workspace(alice, default_agent=True)

    task = factories.make_task(workspace)

    assert list(task.agents.values_list("name", flat=True)) == ["Assistant"]


def test_a_mention_of_the_default_agent_starts_its_turn(alice: User, sent_jobs: list[Any]) -> None:
    from collab.tasks.services import post_message

    workspace = factories.make_workspace(alice, default_agent=True)
    task = factories.make_task(workspace)

    post_message(
        membership=factories.membership_of(workspace, alice),
        task=task,
        body="@Assistant which neighbourhood should we stay in?",
    )

    turn = Agent.objects.get(workspace=workspace).turns.get()
    assert (turn.trigger, turn.task) == (Trigger.MENTION, task)


def test_workspaces_without_an_agent_get_their_default_agent_on_all_their_tasks(
    alice: User,
) -> None:
    bare = factories.make_workspace(alice, "Bare")
    first, second = factories.make_task(bare, "One"), factories.make_task(bare, "Two")
    equipped = factories.make_workspace(alice, "Equipped", default_agent=True)

    created = defaults.add_missing_default_agents()

    assert created == 1
    agent = Agent.objects.get(workspace=bare)
    assert set(agent.tasks.all()) == {first, second}
    assert Agent.objects.filter(workspace=equipped).count() == 1


def test_new_agents_get_a_colour_no_other_agent_of_the_workspace_wears(
    as_user: Any, alice: User
) -> None:
    workspace = factories.make_workspace(alice, default_agent=True)
    for name in ("Second", "Third"):
        as_user(alice).post(
            reverse("agents:manage", args=[workspace.pk]),
            {"name": name, "policy_name": "never", "mode": "suggest_only", "on_mention": "on"},
        )

    colours = list(Agent.objects.order_by("id").values_list("colour", flat=True))
    assert len(colours) == 3
    assert len(set(colours)) == 3
    assert set(colours) <= set(PALETTE)


def test_saving_an_agent_says_so_and_leads_back_to_the_task(
    as_user: Any, alice: User, workspace: Workspace, task: Task, sent_jobs: list[Any]
) -> None:
    agent = defaults.create_default_agent(workspace=workspace, owner=alice)
    edit_url = reverse("agents:edit", args=[workspace.pk, agent.pk]) + f"?task={task.pk}"
    page = as_user(alice).get(edit_url)
    assert f"Back to {task.title}".encode() in page.content
    assert b'data-testid="agent-preview"' in page.content

    response = as_user(alice).post(
        edit_url,
        {
            "name": "Guide",
            "colour": "#2a9d8f",
            "policy_name": "ask_once",
            "mode": "suggest_only",
            "on_mention": "on",
            "is_active": "on",
            "joins_new_tasks": "on",
            "question_timeout_minutes": "10",
        },
        follow=True,
    )

    assert response.redirect_chain[-1][0] == reverse("tasks:detail", args=[task.pk])
    assert b"Guide was saved; it is on the task page now." in response.content
    agent.refresh_from_db()
    assert (agent.name, agent.policy_name, agent.colour) == ("Guide", "ask_once", "#2a9d8f")


def test_an_agent_change_reaches_open_task_pages(
    alice: User,
    workspace: Workspace,
    task: Task,
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
) -> None:
    from agents.outbox import events
    from agents.services import agent_changes

    agent = defaults.create_default_agent(workspace=workspace, owner=alice)
    announced: list[int] = []
    monkeypatch.setattr(events, "task_agents_changed", announced.append)

    with django_capture_on_commit_callbacks(execute=True):
        agent_changes.update_agent(
            membership=factories.membership_of(workspace, alice), agent=agent, is_active=False
        )

    assert announced == [task.pk]


def test_the_default_agent_name_is_checked() -> None:
    assert defaults.check_agent_name("") == "Assistant"
    assert defaults.check_agent_name(" @Scout ") == "Scout"
    with pytest.raises(ValidationError):
        defaults.check_agent_name("9lives")


def test_an_ask_prompt_is_posted_as_the_persons_chat_message(
    as_user: Any, bob: User, workspace: Workspace, task: Task, mira: Agent, sent_jobs: list[Any]
) -> None:
    response = as_user(bob).post(
        reverse("agents:ask", args=[task.pk, mira.pk]),
        {"prompt": "what does a hotel in Alfama cost?"},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 204
    message = Message.objects.get(task=task)
    assert (message.kind, message.author, message.body) == (
        Message.Kind.HUMAN,
        bob,
        "@Mira what does a hotel in Alfama cost?",
    )
    turn = mira.turns.get()
    assert turn.trigger == Trigger.ASK
    assert turn.inputs == {
        "prompt": "what does a hotel in Alfama cost?",
        "message_ids": [message.pk],
    }


def test_an_empty_ask_posts_nothing(
    as_user: Any, bob: User, task: Task, mira: Agent, sent_jobs: list[Any]
) -> None:
    as_user(bob).post(reverse("agents:ask", args=[task.pk, mira.pk]), HTTP_HX_REQUEST="true")

    assert not Message.objects.exists()
    assert mira.turns.count() == 1
