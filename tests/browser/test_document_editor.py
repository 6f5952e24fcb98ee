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
SHOWN = f"document.querySelector('{EDITOR}').collabEditor.view.state.doc.toString()"


@pytest.fixture(scope="module")
def doc_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DocServer]:
    # A version per saved batch, so that the history test has versions to restore.
    server = DocServer(
        Path(tmp_path_factory.mktemp("docserver")), extra_env={"DOCUMENT_VERSION_INTERVAL": "0"}
    )
    server.migrate()
    server.seed_cast()
    server.start()
    yield server
    server.stop()


_page_errors: list[str] = []


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    """Chromium; the test fails if any page raised a JavaScript error."""
    _page_errors.clear()
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield browser
        await browser.close()
    assert _page_errors == []


async def open_task(browser: Browser, server: DocServer, who: str, task_id: int) -> Page:
    context = await browser.new_context(
        base_url=server.url, viewport={"width": 1400, "height": 950}
    )
    await context.add_cookies(
        [{"name": "sessionid", "value": server.sessions[who], "url": server.url}]
    )
    page = await context.new_page()
    page.on("pageerror", lambda error: _page_errors.append(f"{who}: {error}"))
    await page.goto(f"/t/{task_id}/")
    await page.wait_for_selector(f"{EDITOR}[data-ready=true]")
    return page


async def wait_synced(page: Page) -> None:
    await page.wait_for_selector(f"{EDITOR}[data-status=synced]", timeout=20_000)


async def ytext(page: Page) -> str:
    return str(await page.evaluate(YTEXT))


async def wait_for_text(page: Page, predicate: str, timeout: float = 20_000) -> None:
    """Wait until ``predicate`` (a JS expression over ``text``) holds for the page's Y.Text."""
    await page.wait_for_function(
        f"(() => {{ const text = {YTEXT}; return {predicate}; }})()", timeout=timeout
    )


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
    assert "<img src=x onerror=" in await preview.inner_text()  # shown as text, not run
    assert await page.evaluate("window.__pwned") is None


async def test_two_people_typing_at_once_converge_in_both_pages_and_the_database(
    browser, doc_server
):
    task_id = doc_server.make_task("Converge")
    alice = await open_task(browser, doc_server, "alice", task_id)
    bob = await open_task(browser, doc_server, "bob", task_id)
    await wait_synced(alice)
    await wait_synced(bob)
    await type_at(alice, "end", "Agenda\n\n")
    await wait_for_text(bob, "text === 'Agenda\\n\\n'")

    # when both type at the same time, alice at the end and bob at the start
    alice_words = "Alice: lunch at noon, then the venue tour. "
    bob_words = "Bob: book the train 🚆 for 東京. "
    await asyncio.gather(type_at(alice, "end", alice_words), type_at(bob, "start", bob_words))

    expected = bob_words + "Agenda\n\n" + alice_words
    await wait_for_text(alice, f"text === {expected!r}")
    await wait_for_text(bob, f"text === {expected!r}")
    assert await alice.evaluate(SHOWN) == await bob.evaluate(SHOWN) == expected
    assert wait_for_database(doc_server, task_id, expected) == expected


async def test_people_see_each_other_in_the_presence_list_and_as_named_cursors(browser, doc_server):
    task_id = doc_server.make_task("Presence")
    alice = await open_task(browser, doc_server, "alice", task_id)
    bob = await open_task(browser, doc_server, "bob", task_id)
    await wait_synced(alice)
    await wait_synced(bob)

    await type_at(alice, "end", "Where shall we go?")

    await bob.wait_for_selector("[data-role=presence] [data-name=alice]")
    await alice.wait_for_selector("[data-role=presence] [data-name=bob]")
    caret = bob.locator(".cm-ySelectionInfo", has_text="alice")
    await caret.wait_for(state="attached")
    assert await bob.locator("[data-role=presence] .is-me").inner_text() == "B\nbob (you)"


async def test_a_viewer_watches_live_but_cannot_edit(browser, doc_server):
    task_id = doc_server.make_task("Read only")
    alice = await open_task(browser, doc_server, "alice", task_id)
    carol = await open_task(browser, doc_server, "carol", task_id)
    await wait_synced(alice)
    await wait_synced(carol)
    await set_mode(carol, "write")

    await type_at(alice, "end", "Only editors write here.")
    await wait_for_text(carol, "text === 'Only editors write here.'")
    assert await carol.get_attribute(".cm-content", "contenteditable") == "false"
    await carol.click(".cm-content")
    await carol.keyboard.type("carol was here")
    await carol.keyboard.press("Backspace")

    await asyncio.sleep(0.5)  # give a wrongly sent edit time to arrive; the checks are on text
    assert await ytext(carol) == "Only editors write here."
    assert await ytext(alice) == "Only editors write here."
    assert wait_for_database(doc_server, task_id, "Only editors write here.") == (
        "Only editors write here."
    )


async def test_editor_resyncs_after_the_server_restarts_without_losing_offline_typing(
    browser, doc_server
):
    task_id = doc_server.make_task("Restart")
    alice = await open_task(browser, doc_server, "alice", task_id)
    bob = await open_task(browser, doc_server, "bob", task_id)
    await wait_synced(alice)
    await wait_synced(bob)
    await type_at(alice, "end", "Before the restart.")
    assert wait_for_database(doc_server, task_id, "Before the restart.") == "Before the restart."

    # when the server goes away, alice keeps typing, and the server comes back
    doc_server.stop()
    await alice.wait_for_selector(f"{EDITOR}[data-status=disconnected]")
    await type_at(alice, "end", " Typed offline.")
    doc_server.start()

    expected = "Before the restart. Typed offline."
    await wait_synced(alice)
    await wait_synced(bob)
    await wait_for_text(bob, f"text === {expected!r}")
    assert await ytext(alice) == expected
    assert wait_for_database(doc_server, task_id, expected) == expected
    await type_at(bob, "end", " Back online.")
    await wait_for_text(alice, "text.endsWith(' Back online.')")


async def test_an_editor_restores_an_earlier_version_from_the_history_page(browser, doc_server):
    task_id = doc_server.make_task("History")
    alice = await open_task(browser, doc_server, "alice", task_id)
    bob = await open_task(browser, doc_server, "bob", task_id)
    await wait_synced(alice)
    await wait_synced(bob)
    await type_at(alice, "end", "First plan: Lisbon.")
    assert wait_for_database(doc_server, task_id, "First plan: Lisbon.") == "First plan: Lisbon."
    await bob.click(".cm-content")
    await bob.keyboard.press("Control+a")
    await bob.keyboard.type("Oops.")
    assert wait_for_database(doc_server, task_id, "Oops.") == "Oops."
    first = doc_server.version_id(task_id, "First plan: Lisbon.")

    # when alice picks that version in the history and restores it
    await alice.click("a.doc-history-link")
    await alice.click(f"[data-version='{first}']")
    await alice.wait_for_selector(f"form[action$='/{first}/restore/']")
    assert "First plan: Lisbon." in await alice.locator("[data-testid=diff]").inner_text()
    await alice.click("[data-testid=restore]")

    assert "Restored the version" in await alice.locator(".flash").inner_text()
    assert await alice.locator("[data-testid=is-current]").count() == 1
    await wait_for_text(bob, "text === 'First plan: Lisbon.'")
    await alice.click(f"a[href='/t/{task_id}/']")
    await wait_synced(alice)
    await wait_for_text(alice, "text === 'First plan: Lisbon.'")
    assert wait_for_database(doc_server, task_id, "First plan: Lisbon.") == "First plan: Lisbon."
