"""A person creates an API token in the browser, connects an MCP client with it, and what the
client posts appears live on the task's open page."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from playwright.sync_api import BrowserContext, expect

from tests.browser.flows import (
    chat_messages,
    create_task,
    create_workspace,
    expect_chat_live,
    sign_up,
    task_id_of,
)

pytestmark = pytest.mark.browser


async def _post(url: str, token: str, task_id: int, body: str) -> bool:
    async with (
        create_mcp_http_client(headers={"Authorization": f"Bearer {token}"}) as http,
        streamable_http_client(url, http_client=http) as streams,
        ClientSession(streams[0], streams[1]) as session,
    ):
        await session.initialize()
        result = await session.call_tool("post_message", {"task_id": task_id, "body": body})
        return not result.is_error


def test_a_message_posted_by_an_mcp_client_appears_live_on_the_task_page(
    new_context: Callable[[], BrowserContext], server_url: str
) -> None:
    alice = new_context().new_page()
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    task_url = create_task(alice, "Plan the offsite")
    settings_page = alice.context.new_page()
    settings_page.goto("/accounts/settings/")
    settings_page.locator("#api-tokens").get_by_label("Name").fill("my agent")
    settings_page.get_by_role("button", name="Create token").click()
    token = settings_page.get_by_test_id("new-token").inner_text().strip()
    mcp_url = settings_page.get_by_test_id("mcp-url").inner_text().strip()
    assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp", mcp_url)
    alice.goto(task_url)
    expect_chat_live(alice)

    # Playwright's sync API owns this thread's event loop: the MCP client runs in another.
    with ThreadPoolExecutor(1) as pool:
        posted = pool.submit(
            asyncio.run, _post(mcp_url, token, task_id_of(task_url), "Hello from my MCP agent")
        ).result(timeout=60)

    assert posted
    expect(chat_messages(alice).last).to_contain_text("Hello from my MCP agent")
