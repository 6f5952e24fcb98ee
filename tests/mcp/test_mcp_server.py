"""Collab's MCP server, driven by the official SDK's own client: over streamable HTTP at /mcp
of a Daphne server started as `make run` starts it, and over stdio (`manage.py mcp_server`).
A tool acts exactly as the token's person: a viewer reads and nothing more, an outsider finds
nothing, and every call is audited."""

from __future__ import annotations

import asyncio
import json
import sys
import urllib.error
import urllib.request
from typing import Any

import pytest
from django.conf import settings
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from collab.audit.models import AuditEvent
from collab.tasks.models import Message, Task
from tests.api.conftest import token_for
from tests.browser.conftest import LiveServer
from tests.processes import live_env

pytestmark = pytest.mark.django_db(transaction=True)


async def _over_http(url: str, token: str, calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    headers = {"Authorization": f"Bearer {token}"}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        return [await session.call_tool(name, args) for name, args in calls]


def call_over_http(server: LiveServer, token: str, *calls: tuple[str, dict[str, Any]]) -> list[Any]:
    return asyncio.run(_over_http(server.url, token, list(calls)))


def test_an_editor_reads_a_task_and_posts_into_its_chat_over_http(
    mcp_server: LiveServer, bob: Any, task: Task
) -> None:
    task.goal = "Plan a two-day offsite for 12 people in May."
    task.save(update_fields=["goal"])

    read, posted = call_over_http(
        mcp_server,
        token_for(bob),
        ("read_task", {"task_id": task.pk}),
        ("post_message", {"task_id": task.pk, "body": "Posted from an MCP client"}),
    )

    assert not read.is_error
    assert read.structured_content["goal"] == "Plan a two-day offsite for 12 people in May."
    assert read.structured_content["your_role"] == "editor"
    assert not posted.is_error
    message = Message.objects.select_related("author").get(task=task)
    assert message.author is not None
    assert (message.body, message.author.username) == ("Posted from an MCP client", "bob")
    actions = set(AuditEvent.objects.filter(actor=bob).values_list("action", flat=True))
    assert {"mcp.read_task", "mcp.post_message"} <= actions


def test_a_viewer_reads_but_cannot_post(mcp_server: LiveServer, carol: Any, task: Task) -> None:
    read, posted = call_over_http(
        mcp_server,
        token_for(carol),
        ("read_task", {"task_id": task.pk}),
        ("post_message", {"task_id": task.pk, "body": "A viewer trying to post"}),
    )

    assert not read.is_error
    assert posted.is_error
    assert "cannot post" in posted.content[0].text
    assert not Message.objects.filter(task=task).exists()


def test_an_outsider_finds_no_task_and_no_workspace(
    mcp_server: LiveServer, mallory: Any, task: Task
) -> None:
    read, listed = call_over_http(
        mcp_server,
        token_for(mallory),
        ("read_task", {"task_id": task.pk}),
        ("list_tasks", {"workspace_id": task.workspace_id}),
    )

    assert read.is_error
    assert "No task" in read.content[0].text
    assert listed.is_error
    assert "No workspace" in listed.content[0].text
    assert task.title not in json.dumps([c.model_dump() for c in read.content])


@pytest.mark.parametrize("header", [None, "Bearer collab_not-a-token", "Basic abc"])
def test_a_request_without_a_valid_token_is_refused_with_401(
    mcp_server: LiveServer, header: str | None, db: None
) -> None:
    request = urllib.request.Request(  # noqa: S310 - the test's own server on loopback
        f"{mcp_server.url}/mcp",
        data=b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}',
        headers={"content-type": "application/json", "accept": "application/json"},
        method="POST",
    )
    if header:
        request.add_header("Authorization", header)
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)  # noqa: S310
    refused.value.close()
    assert refused.value.code == 401


def test_memory_read_over_mcp_is_only_the_callers_own(
    mcp_server: LiveServer, alice: Any, bob: Any, task: Task
) -> None:
    from agents.memory.models import MemoryItem

    MemoryItem.objects.create(owner=alice, text="Alice prefers British spelling")
    MemoryItem.objects.create(owner=bob, text="Bob's private note about his manager")

    (memory,) = call_over_http(mcp_server, token_for(alice), ("read_my_memory", {}))

    texts = [item["text"] for item in memory.structured_content["result"]]
    assert texts == ["Alice prefers British spelling"]


async def _over_stdio(token: str, task_id: int) -> tuple[list[str], Any]:
    parameters = StdioServerParameters(
        command=sys.executable,
        args=["manage.py", "mcp_server"],
        env=live_env(COLLAB_API_TOKEN=token),
        cwd=str(settings.BASE_DIR),
    )
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        tools = await session.list_tools()
        resource = await session.read_resource(f"collab://tasks/{task_id}/document")
        return [t.name for t in tools.tools], resource


def test_the_stdio_server_lists_the_tools_and_reads_a_document(bob: Any, task: Task) -> None:
    Task.objects.filter(pk=task.pk).update(goal="Ship the spring newsletter")

    names, resource = asyncio.run(_over_stdio(token_for(bob), task.pk))

    assert {"read_task", "post_message", "answer_question", "read_my_memory"} <= set(names)
    assert resource.contents[0].mime_type == "text/markdown"
