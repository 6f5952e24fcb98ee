"""The live document editor in real Chromium pages against a real server process.

The cast (alice owns, bob edits, carol views) is created with the ORM before Chromium starts
(fixture order); during a test the database is read from a worker thread, since Playwright's
sync API makes the main thread look async to Django.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import zip_longest
from typing import TypeVar

import pytest
from django.db import connection
from django.test import Client
from playwright.sync_api import BrowserContext, Page, expect

from collab.tasks.models import Document, DocumentVersion
from collab.workspaces.models import Role
from tests import factories
from tests.browser.conftest import LiveServer
from tests.browser.flows import poll_until

pytestmark = pytest.mark.browser

EDITOR = "[data-collab-editor]"
YTEXT = f"document.querySelector('{EDITOR}').collabEditor.ytext.toString()"
SHOWN = f"document.querySelector('{EDITOR}').collabEditor.view.state.doc.toString()"
T = TypeVar("T")


def in_thread(read: Callable[[], T]) -> T:
    """Run an ORM read outside the main thread (and close that thread's connection)."""

    def run() -> T:
        try:
            return read()
        finally:
            connection.close()

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(run).result()


@dataclass
class Cast:
    task_id: int
    sessions: dict[str, str]
    page_errors: list[str] = field(default_factory=list)


@pytest.fixture
def cast(transactional_db: None) -> Iterator[Cast]:
    """Acme (alice owns, bob edits, carol views) with one task, and a session per person.

    Request it before the browser fixtures so that it runs before Chromium starts."""
    users = {name: factories.make_user(name) for name in ("alice", "bob", "carol")}
    workspace = factories.make_workspace(users["alice"])
    factories.add_member(workspace, users["bob"], Role.EDITOR)
    factories.add_member(workspace, users["carol"], Role.VIEWER)
    task = factories.make_task(workspace)
    sessions = {}
    for name, user in users.items():
        client = Client()
        client.force_login(user)
        sessions[name] = client.cookies["sessionid"].value
    cast = Cast(task_id=task.pk, sessions=sessions)
    yield cast
    assert cast.page_errors == []


@pytest.fixture
def open_task(
    cast: Cast, new_context: Callable[[], BrowserContext], server_url: str
) -> Callable[[str], Page]:
    """``open_task("bob")``: bob's own browser on the task page, once the editor is live."""

    def _open(who: str) -> Page:
        context = new_context()
        context.add_cookies([{"name": "sessionid", "value": cast.sessions[who], "url": server_url}])
        page = context.new_page()
        page.on("pageerror", lambda error: cast.page_errors.append(f"{who}: {error}"))
        page.goto(f"/t/{cast.task_id}/")
        expect(page.locator(f"{EDITOR}[data-status=synced]")).to_have_count(1)
        return page

    return _open


def ytext(page: Page) -> str:
    return str(page.evaluate(YTEXT))


def wait_for_text(page: Page, predicate: str, timeout: float | None = None) -> None:
    """Wait until ``predicate`` (a JS expression over ``text``) holds for the page's Y.Text."""
    # Polled from here: Playwright's wait_for_function evaluates a string with eval in the
    # page, which the Content-Security-Policy (script-src 'self') refuses.
    poll_until(page, f"(() => {{ const text = {YTEXT}; return {predicate}; }})()", timeout)


def saved_text(task_id: int) -> str:
    return in_thread(lambda: Document.objects.get(task_id=task_id).text)


def wait_for_database(page: Page, task_id: int, expected: str, seconds: float = 15) -> str:
    """``Document.text`` once it reads ``expected`` (or whatever it reads after ``seconds``)."""
    text = saved_text(task_id)
    for _ in range(int(seconds / 0.25)):
        if text == expected:
            break
        page.wait_for_timeout(250)
        text = saved_text(task_id)
    return text


def set_mode(page: Page, mode: str) -> None:
    page.click(f"{EDITOR} button[data-mode={mode}]")


def caret_to(page: Page, where: str) -> None:
    page.click(".cm-content")
    page.keyboard.press("Control+Home" if where == "start" else "Control+End")


def type_at(page: Page, where: str, text: str) -> None:
    """Put the caret at the start or end of the document and type like a person."""
    caret_to(page, where)
    page.keyboard.type(text, delay=10)


def test_preview_shows_the_document_sanitised(cast, open_task):
    page = open_task("alice")
    hostile = (
        "# Heading\n\n<script>window.__pwned = 1</script>\n\n"
        '<img src=x onerror="window.__pwned = 2">\n\n[click](javascript:window.__pwned=3)\n'
    )

    set_mode(page, "split")
    page.click(".cm-content")
    page.keyboard.insert_text(hostile)

    preview = page.locator("[data-role=preview]")
    expect(preview).to_have_attribute("data-rendered-length", str(len(hostile)))
    expect(preview.locator("h1")).to_have_text("Heading")
    expect(preview.locator("script, img[onerror], a[href^=javascript]")).to_have_count(0)
    expect(preview).to_contain_text("<img src=x onerror=")  # shown as text, not run
    assert page.evaluate("window.__pwned") is None


def test_two_people_typing_at_once_converge_in_both_pages_and_the_database(cast, open_task):
    alice = open_task("alice")
    bob = open_task("bob")
    type_at(alice, "end", "Agenda\n\n")
    wait_for_text(bob, "text === 'Agenda\\n\\n'")
    caret_to(alice, "end")
    caret_to(bob, "start")

    # when both type at once, key by key in turn, neither waiting for the other's changes
    alice_words = "Alice: lunch at noon, then the venue tour. "
    bob_words = "Bob: book the train 🚆 for 東京. "
    for alice_key, bob_key in zip_longest(alice_words, bob_words):
        if alice_key:
            alice.keyboard.type(alice_key)
        if bob_key:
            bob.keyboard.type(bob_key)

    expected = bob_words + "Agenda\n\n" + alice_words
    wait_for_text(alice, f"text === {expected!r}")
    wait_for_text(bob, f"text === {expected!r}")
    assert alice.evaluate(SHOWN) == bob.evaluate(SHOWN) == expected
    assert wait_for_database(alice, cast.task_id, expected) == expected


def test_people_see_each_other_in_the_presence_list_and_as_named_cursors(cast, open_task):
    alice = open_task("alice")
    bob = open_task("bob")

    type_at(alice, "end", "Where shall we go?")

    expect(bob.locator("[data-role=presence] [data-name=alice]")).to_have_count(1)
    expect(alice.locator("[data-role=presence] [data-name=bob]")).to_have_count(1)
    expect(bob.locator(".cm-ySelectionInfo", has_text="alice")).to_have_count(1)
    expect(bob.locator("[data-role=presence] .is-me .presence-name")).to_have_text("bob (you)")


def test_a_viewer_cannot_pass_for_someone_else_in_the_co_editors_list(cast, open_task):
    bob = open_task("bob")
    carol = open_task("carol")
    expect(bob.locator("[data-role=presence] [data-name=carol]")).to_have_count(1)

    # when the viewer's page says she is alice, an agent, the owner, in another colour
    awareness = f"document.querySelector('{EDITOR}').collabEditor.awareness"
    carol_id = carol.evaluate(f"{awareness}.clientID")
    carol.evaluate(
        f"{awareness}.setLocalStateField('user',"
        " {name: 'alice', kind: 'agent', color: '#000000', role: 'owner'})"
    )
    clock = carol.evaluate(f"{awareness}.meta.get({awareness}.clientID).clock")

    # then, once bob's page has that state, it still shows carol, a person, and no one else
    poll_until(
        bob,
        f"(() => {{ const meta = {awareness}.meta.get({carol_id});"
        f" return !!meta && meta.clock >= {clock}; }})()",
    )
    expect(bob.locator("[data-role=presence] .kind-person[data-name=carol]")).to_have_count(1)
    expect(bob.locator("[data-role=presence] [data-name=alice]")).to_have_count(0)
    expect(bob.locator("[data-role=presence] .kind-agent")).to_have_count(0)


def test_a_viewer_watches_live_but_cannot_edit(cast, open_task):
    alice = open_task("alice")
    carol = open_task("carol")
    expect(carol.get_by_test_id("readonly-note")).to_be_visible()
    set_mode(carol, "write")

    type_at(alice, "end", "Only editors write here.")
    wait_for_text(carol, "text === 'Only editors write here.'")
    expect(carol.locator(".cm-content")).to_have_attribute("contenteditable", "false")
    carol.click(".cm-content")
    carol.keyboard.type("carol was here")
    carol.keyboard.press("Backspace")
    type_at(alice, "end", " Really.")

    expected = "Only editors write here. Really."
    wait_for_text(carol, f"text === {expected!r}")
    assert ytext(alice) == expected
    assert wait_for_database(alice, cast.task_id, expected) == expected


def test_editor_resyncs_after_the_server_restarts_without_losing_offline_typing(
    cast, own_server: LiveServer, open_task
):
    alice = open_task("alice")
    bob = open_task("bob")
    type_at(alice, "end", "Before the restart.")
    assert wait_for_database(alice, cast.task_id, "Before the restart.") == "Before the restart."

    # when the server goes away, alice keeps typing, and the server comes back
    own_server.stop()
    expect(alice.locator(f"{EDITOR}[data-status=disconnected]")).to_have_count(1)
    expect(alice.locator("[data-role=status]")).to_have_text("Offline, reconnecting…")
    type_at(alice, "end", " Typed offline.")
    own_server.start()

    expected = "Before the restart. Typed offline."
    expect(alice.locator(f"{EDITOR}[data-status=synced]")).to_have_count(1)
    wait_for_text(bob, f"text === {expected!r}")
    assert ytext(alice) == expected
    assert wait_for_database(alice, cast.task_id, expected) == expected
    type_at(bob, "end", " Back online.")
    wait_for_text(alice, "text.endsWith(' Back online.')")


def test_an_editor_restores_an_earlier_version_from_the_history_page(cast, open_task):
    alice = open_task("alice")
    bob = open_task("bob")
    caret_to(alice, "end")
    alice.keyboard.insert_text("First plan: Lisbon.")  # one update: the document's first version
    assert wait_for_database(alice, cast.task_id, "First plan: Lisbon.") == "First plan: Lisbon."
    first = in_thread(lambda: _version_reading(cast.task_id, "First plan: Lisbon."))
    bob.click(".cm-content")
    bob.keyboard.press("Control+a")
    bob.keyboard.type("Oops.")
    assert wait_for_database(alice, cast.task_id, "Oops.") == "Oops."

    # when alice picks that version in the history and restores it
    alice.click("a.doc-history-link")
    alice.click(f"[data-version='{first}']")
    expect(alice.locator(f"form[action$='/{first}/restore/']")).to_have_count(1)
    expect(alice.get_by_test_id("diff")).to_contain_text("First plan: Lisbon.")
    alice.get_by_test_id("restore").click()

    expect(alice.locator(".flash")).to_contain_text("Restored the version")
    expect(alice.get_by_test_id("is-current")).to_have_count(1)
    wait_for_text(bob, "text === 'First plan: Lisbon.'")
    alice.click(f"a[href='/t/{cast.task_id}/']")
    wait_for_text(alice, "text === 'First plan: Lisbon.'")
    assert saved_text(cast.task_id) == "First plan: Lisbon."


def _version_reading(task_id: int, text: str) -> int:
    """A version of the document that reads ``text``: one is saved when typing pauses
    (DOCUMENT_VERSION_PAUSE_SECONDS), before a large deletion, or every
    DOCUMENT_VERSION_INTERVAL of unbroken typing; waits for the pause's version."""
    deadline = time.monotonic() + 60
    while True:
        version = DocumentVersion.objects.filter(document__task_id=task_id, text=text).last()
        if version is not None:
            return version.pk
        if time.monotonic() > deadline:
            raise AssertionError(f"no version reads {text!r} a minute after typing paused")
        time.sleep(0.25)


def test_editors_resync_after_a_network_drop_keeping_what_both_sides_typed(cast, open_task):
    alice = open_task("alice")
    bob = open_task("bob")
    type_at(alice, "end", "Shared line.")
    wait_for_text(bob, "text === 'Shared line.'")

    # when alice's network drops while both keep typing, then comes back
    alice.context.set_offline(True)
    expect(alice.locator("[data-role=status]")).to_have_text("Offline, reconnecting…")
    type_at(alice, "end", " Alice offline.")
    type_at(bob, "start", "Bob online. ")
    assert wait_for_database(bob, cast.task_id, "Bob online. Shared line.") == (
        "Bob online. Shared line."
    )
    alice.context.set_offline(False)

    expected = "Bob online. Shared line. Alice offline."
    wait_for_text(alice, f"text === {expected!r}")
    wait_for_text(bob, f"text === {expected!r}")
    expect(alice.locator(f"{EDITOR}[data-status=synced]")).to_have_count(1)
    assert wait_for_database(bob, cast.task_id, expected) == expected


def test_a_document_saved_as_plain_text_opens_once_for_everyone(cast, open_task):
    in_thread(
        lambda: Document.objects.filter(task_id=cast.task_id).update(
            text="# Plan\n\nFrom the API.\n"
        )
    )
    alice = open_task("alice")
    bob = open_task("bob")

    wait_for_text(alice, "text === '# Plan\\n\\nFrom the API.\\n'")
    wait_for_text(bob, "text === '# Plan\\n\\nFrom the API.\\n'")
    type_at(bob, "end", "Edited.")
    expected = "# Plan\n\nFrom the API.\nEdited."
    wait_for_text(alice, f"text === {expected!r}")
    assert wait_for_database(alice, cast.task_id, expected) == expected
