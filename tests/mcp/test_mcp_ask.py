"""Asking an agent a question over MCP (the Ask button's service), with the SDK's own client
over streamable HTTP at /mcp of a Daphne server: an editor asks, a viewer's token reads and
nothing more, an outsider finds nothing, and every call is audited."""

from __future__ import annotations

from typing import Any

import pytest

from agents.models import Agent, Trigger, Turn
from collab.audit.models import AuditEvent
from collab.tasks.models import Message, Task
from tests.api.conftest import token_for
from tests.browser.conftest import LiveServer
from tests.mcp.test_mcp_server import call_over_http

pytestmark = pytest.mark.django_db(transaction=True)


def test_an_editor_asks_the_tasks_agent_and_its_turn_starts(
    mcp_server: LiveServer, bob: Any, task: Task
) -> None:
    mira = Agent.objects.create(workspace=task.workspace, name="Mira")
    mira.tasks.add(task)

    (asked,) = call_over_http(
        mcp_server,
        token_for(bob),
        ("ask_question", {"task_id": task.pk, "question": "Which dates work for 山田?"}),
    )

    assert not asked.is_error, asked.content
    turn = Turn.objects.get(pk=asked.structured_content["turn_id"])
    assert (turn.agent, turn.trigger, turn.requested_by) == (mira, Trigger.ASK, bob)
    message = Message.objects.get(task=task)
    assert message.body == "@Mira Which dates work for 山田?"
    assert asked.structured_content["message_id"] == message.pk
    assert AuditEvent.objects.filter(actor=bob, action="mcp.ask_question").exists()


def test_with_several_agents_the_client_is_told_which_to_choose(
    mcp_server: LiveServer, bob: Any, task: Task
) -> None:
    for name in ("Mira", "Scout"):
        Agent.objects.create(workspace=task.workspace, name=name).tasks.add(task)
    scout = Agent.objects.get(name="Scout")

    unsure, chosen = call_over_http(
        mcp_server,
        token_for(bob),
        ("ask_question", {"task_id": task.pk, "question": "Budget?"}),
        ("ask_question", {"task_id": task.pk, "question": "Budget?", "agent_id": scout.pk}),
    )

    assert unsure.is_error
    assert f"Scout (agent_id {scout.pk})" in unsure.content[0].text
    assert not chosen.is_error
    assert Turn.objects.get().agent == scout


def test_a_viewer_cannot_ask_and_an_outsider_finds_no_task(
    mcp_server: LiveServer, carol: Any, mallory: Any, task: Task
) -> None:
    Agent.objects.create(workspace=task.workspace, name="Mira").tasks.add(task)
    ask = ("ask_question", {"task_id": task.pk, "question": "Budget?"})

    (viewer,) = call_over_http(mcp_server, token_for(carol), ask)
    (outsider,) = call_over_http(mcp_server, token_for(mallory), ask)

    assert viewer.is_error
    assert "cannot ask agents here" in viewer.content[0].text
    assert outsider.is_error
    assert f"No task {task.pk}" in outsider.content[0].text
    assert not Turn.objects.exists()
    assert not Message.objects.exists()
