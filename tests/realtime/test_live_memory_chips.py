"""An agent's live reply shows each open page the remembered items of that person's it used
(as after a reload), and nobody anyone else's."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User
from django.urls import reverse

from agents.engine import runner
from agents.memory.models import MemoryItem
from agents.models import ModelProfile, Provider, Turn
from agents.services import agents as agent_services
from collab.tasks import services as task_services
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.realtime.conftest import OpenSocket

pytestmark = pytest.mark.django_db(transaction=True)

ITEM = "Bob prefers numbered lists"


def _reply_with_bobs_item(workspace: Workspace, alice: User, bob: User, task: Task) -> int:
    profile = ModelProfile.objects.create(name="fake", provider=Provider.FAKE, model="echo")
    agent_services.create_agent(
        membership=factories.membership_of(workspace, alice), name="Mira", model_profile=profile
    )
    item = MemoryItem.objects.create(owner=bob, text=ITEM)
    task_services.post_message(
        membership=factories.membership_of(workspace, bob),
        task=task,
        body="@Mira make a list of venues",
    )
    turn = Turn.objects.get()
    runner.run_turn(turn_id=turn.pk)
    turn.refresh_from_db()
    assert turn.context["memory_item_ids"] == [item.pk]  # the turn did use it
    return item.pk


async def _agent_message_html(socket: Any) -> str:
    for _ in range(50):
        html = await socket.receive_html()
        if 'class="message kind-agent"' in html:
            return html
    raise AssertionError("no agent message arrived")


async def _agent_message_event(socket: Any) -> dict[str, Any]:
    for _ in range(50):
        event = await socket.receive_event()
        if event.get("type") == "chat.message" and event.get("kind") == "agent":
            return event
    raise AssertionError("no agent message arrived")


async def test_a_live_reply_shows_its_owner_the_memory_it_used_and_nobody_else(
    open_socket: OpenSocket, workspace: Workspace, alice: User, bob: User, carol: User, task: Task
) -> None:
    bobs_page = await open_socket(bob, task.pk)
    bobs_client = await open_socket(bob, task.pk, fmt="json")
    alices_page = await open_socket(alice, task.pk)
    carols_page = await open_socket(carol, task.pk)  # a viewer

    item_id = await database_sync_to_async(_reply_with_bobs_item)(workspace, alice, bob, task)

    bobs = await _agent_message_html(bobs_page)
    assert 'data-testid="memory-used"' in bobs
    assert ITEM in bobs
    assert f'href="{reverse("memory:item", args=[item_id])}"' in bobs
    event = await _agent_message_event(bobs_client)
    assert [chip["id"] for chip in event["memory_used"]] == [item_id]
    for other in (alices_page, carols_page):
        html = await _agent_message_html(other)
        assert 'data-testid="memory-used"' not in html
        assert ITEM not in html
