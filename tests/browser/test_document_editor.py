"""The live document editor in real Chromium pages against a real Daphne process."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from playwright.async_api import Browser, Page, async_playwright

from tests.browser.docserver import CHROMIUM, CHROMIUM_ARGS, DocServer

pytestmark = pytest.mark.browser

EDITOR = "[data-collab-editor]"
YTEXT = f"document.querySelector('{EDITOR}').collabEditor.ytext.toString()"


@pytest.fixture(scope="module")
def doc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocServer]:
    server = DocServer(Path(tmp_path_factory.mktemp("docserver")))
    server.migrate()
    server.sessions = server.seed_cast()  # type: ignore[attr-defined]
    server.start()
    yield server
    server.stop()


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        await browser.close()


async def open_task(browser: Browser, server: DocServer, who: str, task_id: int) -> Page:
    context = await browser.new_context(
        base_url=server.url, viewport={"width": 1400, "height": 950}
    )
    await context.add_cookies(
        [{"name": "sessionid", "value": server.sessions[who], "url": server.url}]  # type: ignore[attr-defined]
    )
    page = await context.new_page()
    page.on("pageerror", lambda error: pytest.fail(f"{who}'s page raised: {error}"))
    await page.goto(f"/t/{task_id}/")
    await page.wait_for_selector(f"{EDITOR}[data-ready=true]")
    return page


async def wait_synced(page: Page) -> None:
    await page.wait_for_selector(f"{EDITOR}[data-status=synced]", timeout=20_000)


async def ytext(page: Page) -> str:
    return str(await page.evaluate(YTEXT))


async def wait_for_text(page: Page, predicate: str, timeout: float = 20_000) -> None:
    """Wait until ``predicate`` (a JS expression over ``text``) holds for the page's Y.Text."""
    await page.wait_for_function(f"(() => {{ const text = {YTEXT}; return {predicate}; }})()",
                                 timeout=timeout)


def wait_for_database(server: DocServer, task_id: int, expected: str, timeout: float = 20) -> str:
    deadline = time.monotonic() + timeout
    text = server.document_text(task_id)
    while text != expected and time.monotonic() < deadline:
        time.sleep(0.3)
        text = server.document_text(task_id)
    return text


async def set_mode(page: Page, mode: str) -> None:
    await page.click(f"{EDITOR} button[data-mode={mode}]")


async def type_at(page: Page, where: str, text: str) -> None:
    """Put the caret at the start or end of the document and type like a person."""
    await page.click(".cm-content")
    await page.keyboard.press("Control+Home" if where == "start" else "Control+End")
    await page.keyboard.type(text, delay=15)


async def test_preview_shows_the_document_sanitised(browser, doc_server):
    task_id = doc_server.make_task("Preview")
    page = await open_task(browser, doc_server, "alice", task_id)
    hostile = (
        "# Heading\n\n<script>window.__pwned = 1</script>\n\n"
        '<img src=x onerror="window.__pwned = 2">\n\n[click](javascript:window.__pwned=3)\n'
    )

    await set_mode(page, "split")
    await page.click(".cm-content")
    await page.keyboard.insert_text(hostile)
    await page.wait_for_function(
        f"document.querySelector('[data-role=preview]').dataset.renderedLength == {len(hostile)}"
    )

    preview = page.locator("[data-role=preview]")
    assert await preview.locator("h1").inner_text() == "Heading"
    assert await preview.locator("script, img[onerror], a[href^=javascript]").count() == 0
    assert await page.evaluate("window.__pwned") is None
    await page.click("a:has-text('click')") if await page.locator("a:has-text('click')").count() else None
    assert await page.evaluate("window.__pwned") is None
