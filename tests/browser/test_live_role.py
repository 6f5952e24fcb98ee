"""A task page follows live what changes elsewhere (#19.4): a person's role, the task status, the
chat connection going offline, a new agent of the workspace.

Every page here fails the test on a console error, page error or failed request (flows.Watch).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.flows import (
    Watch,
    add_agent_to_task,
    chat_messages,
    create_agent,
    create_task,
    create_workspace,
    expect_chat_live,
    fake_model_profile,
    join,
    owner_and_editor,
    send_chat,
    sign_up,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

EDITOR = ".cm-content"


def _person(new_context: Callable[[], BrowserContext], watch: Watch) -> Page:
    return watch.attach(new_context().new_page())


def _set_role(members: Page, who: str, role: str) -> None:
    members.get_by_label(f"Role of {who}").select_option(value=role)
    members.locator(f"tr[data-member={who}]").get_by_role("button", name="Change").click()
    expect(members.locator(f"tr[data-member={who}] select")).to_have_value(role)


def test_a_viewer_made_editor_edits_posts_and_asks_at_once_and_a_demotion_takes_it_back(
    new_context: Callable[[], BrowserContext], worker: None
) -> None:
    watches = {name: Watch(name) for name in ("alice", "carol")}
    alice = _person(new_context, watches["alice"])
    carol = _person(new_context, watches["carol"])
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    alice.get_by_role("link", name="Members").click()
    members_url = alice.url
    alice.get_by_label("Role", exact=True).select_option(value="viewer")
    alice.get_by_role("button", name="Create invitation link").click()
    viewer_link = alice.get_by_test_id("invite-url").input_value()
    sign_up(carol, "carol")
    join(carol, viewer_link, "Acme")
    fake_model_profile("Model echo", "echo")
    task_url = create_task(alice, "Plan the offsite")
    alice.get_by_role("link", name="Manage agents").click()
    create_agent(alice, "Sage", "Model echo")
    add_agent_to_task(alice, task_url, "Sage")

    carol.goto(task_url)
    for page in (alice, carol):
        expect_chat_live(page)
        expect(page.locator("[data-collab-editor][data-status=synced]")).to_be_visible()
    expect(carol.locator(EDITOR)).to_have_attribute("contenteditable", "false")
    expect(carol.locator("#chat-form")).to_contain_text("viewers cannot post")
    expect(carol.get_by_test_id("ask-Sage")).to_have_count(0)
    expect(carol.get_by_label("Task status")).to_have_count(0)

    # alice makes carol an editor while carol's page stays open
    members = watches["alice"].attach(alice.context.new_page())
    members.goto(members_url)
    _set_role(members, "carol", "editor")

    expect(carol.locator(EDITOR)).to_have_attribute("contenteditable", "true")
    expect(carol.get_by_test_id("role-notice")).to_contain_text("You can now edit")
    expect(carol.get_by_test_id("readonly-note")).to_have_count(0)
    expect(carol.get_by_test_id("ask-Sage")).to_be_visible()
    expect(carol.get_by_label("Task status")).to_be_visible()
    carol.locator(EDITOR).click()
    carol.keyboard.type("Carol can write now.")
    expect(alice.locator(EDITOR)).to_contain_text("Carol can write now.")
    send_chat(carol, "Thanks for the promotion")
    expect(chat_messages(alice).last).to_contain_text("Thanks for the promotion")
    carol.get_by_test_id("ask-Sage").click()
    expect(alice.locator("#agent-cards [data-agent=Sage] .agent-status")).to_have_attribute(
        "data-status", "done"
    )

    # and back: a viewer again, with the page still open
    _set_role(members, "carol", "viewer")
    expect(carol.locator(EDITOR)).to_have_attribute("contenteditable", "false")
    expect(carol.get_by_test_id("role-notice")).to_contain_text("You are now a viewer")
    expect(carol.locator("#chat-form")).to_contain_text("viewers cannot post")
    expect(carol.get_by_test_id("ask-Sage")).to_have_count(0)
    expect(carol.get_by_test_id("readonly-note")).to_be_visible()
    carol.locator(EDITOR).click()
    carol.keyboard.type("Still here?")
    expect(carol.locator(EDITOR)).not_to_contain_text("Still here?")

    problems = [f"{w.who}: {p}" for w in watches.values() for p in w.problems]
    assert problems == [], "\n".join(problems)


def test_status_offline_badge_and_a_new_agent_follow_on_an_open_page(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice, bob = owner_and_editor(new_context)
    watch = Watch("bob")
    watch.attach(bob)
    task_url = create_task(alice, "Plan the offsite")
    agents_url = alice.get_by_role("link", name="Manage agents").get_attribute("href")
    bob.goto(task_url)
    expect_chat_live(bob)

    # one status on bob's screen, the dropdown, and it follows alice's change
    status = bob.get_by_label("Task status")
    expect(status).to_have_value("open")
    # (the badge stays in the page as the live-update target, inside a visually hidden box)
    shown = "document.getElementById('task-status').parentElement.getBoundingClientRect().width"
    assert bob.evaluate(shown) <= 1, "the status badge shows beside the dropdown"
    alice.get_by_label("Task status").select_option(value="in_progress")
    expect(status).to_have_value("in_progress")

    # the chat badge says offline while the network is gone, live once it is back
    with watch.allowing("WebSocket", "ERR_INTERNET_DISCONNECTED"):
        bob.context.set_offline(True)
        expect(bob.locator("#chat-connection")).to_have_text("offline")
        bob.context.set_offline(False)
        expect_chat_live(bob)

    # an agent alice creates is on bob's "Agent to add" list without a reload
    fake_model_profile("Model echo", "echo")
    assert agents_url
    alice.goto(agents_url)
    create_agent(alice, "Nova", "Model echo")
    expect(bob.get_by_label("Agent to add").locator("option", has_text="Nova")).to_have_count(1)
    bob.get_by_label("Agent to add").select_option(label="Nova")
    bob.get_by_role("button", name="Add to task").click()
    expect(bob.locator("#agent-cards [data-agent=Nova]")).to_be_visible()

    assert watch.problems == [], "\n".join(watch.problems)


def _bob_on_alice_s_task(
    new_context: Callable[[], BrowserContext],
) -> tuple[Page, Page, Watch, str]:
    """alice's workspace and task, bob (an editor, watched) on its page with the chat live."""
    alice, bob = owner_and_editor(new_context)
    watch = Watch("bob")
    watch.attach(bob)
    task_url = create_task(alice, "Plan the offsite")
    bob.goto(task_url)
    expect_chat_live(bob)
    return alice, bob, watch, task_url


def _chat_sockets(page: Page) -> list[str]:
    """The chat sockets the page opens from now on (their URLs, in order)."""
    opened: list[str] = []
    page.on("websocket", lambda ws: "/chat" in ws.url and opened.append(ws.url))
    return opened


def test_a_reconnect_that_replaces_an_open_chat_socket_settles_on_one_socket(
    new_context: Callable[[], BrowserContext],
) -> None:
    """A reconnect (the page coming back online does one) closes the socket it replaces; that
    close must not start another reconnect, which would close the new socket in turn, a new
    socket every second, and drop every live event sent in the gaps (cards, the status)."""
    alice, bob, watch, _ = _bob_on_alice_s_task(new_context)
    opened = _chat_sockets(bob)
    bob.evaluate("document.getElementById('chat')['htmx-internal-data'].webSocket.init()")
    expect_chat_live(bob)
    bob.wait_for_timeout(5000)  # the old page reconnected every 0.5 to 1 s from here on
    assert len(opened) == 1, f"{len(opened)} chat sockets opened after one reconnect"
    alice.get_by_label("Task status").select_option(value="in_progress")
    expect(bob.get_by_label("Task status")).to_have_value("in_progress")
    assert watch.problems == [], "\n".join(watch.problems)


def test_what_an_offline_page_missed_is_on_it_once_it_is_back(
    new_context: Callable[[], BrowserContext],
) -> None:
    """Agent cards and the status published while bob's page was offline reach it when its
    socket is back: the page reads them again, not only the chat messages."""
    alice, bob = owner_and_editor(new_context)
    watch = Watch("bob")
    watch.attach(bob)
    task_url = create_task(alice, "Plan the offsite")
    fake_model_profile("Model echo", "echo")
    alice.get_by_role("link", name="Manage agents").click()
    create_agent(alice, "Nova", "Model echo")
    bob.goto(task_url)
    expect_chat_live(bob)
    expect(bob.locator("#agent-cards [data-agent=Nova]")).to_have_count(0)
    with watch.allowing("WebSocket", "ERR_INTERNET_DISCONNECTED"):
        bob.context.set_offline(True)
        expect(bob.locator("#chat-connection")).to_have_text("offline")
        add_agent_to_task(alice, task_url, "Nova")
        alice.get_by_label("Task status").select_option(value="in_progress")
        expect(alice.get_by_label("Task status")).to_have_value("in_progress")
        bob.context.set_offline(False)
        expect_chat_live(bob)
    expect(bob.locator("#agent-cards [data-agent=Nova]")).to_be_visible()
    expect(bob.get_by_label("Task status")).to_have_value("in_progress")
    expect(bob.get_by_test_id("ask-Nova")).to_be_visible()
    assert watch.problems == [], "\n".join(watch.problems)


def test_presence_comes_back_on_both_pages_as_soon_as_a_page_reconnects(
    new_context: Callable[[], BrowserContext],
) -> None:
    """After bob's page loses its sockets and gets them back, each page shows the other person
    again at once, not after the next presence renewal (y-protocols renews every 15 s and the
    old room's clocks made both pages refuse the other's state until then)."""
    alice, bob, watch, _ = _bob_on_alice_s_task(new_context)
    people = "People and agents in this document"
    for page, other in ((alice, "bob"), (bob, "alice")):
        expect(page.get_by_role("list", name=people)).to_contain_text(other)
    with watch.allowing("WebSocket", "ERR_INTERNET_DISCONNECTED"):
        bob.context.set_offline(True)
        expect(bob.locator("#chat-connection")).to_have_text("offline")
        bob.wait_for_timeout(1000)  # bob's editor drops its socket while offline
        bob.context.set_offline(False)
        expect_chat_live(bob)
    # well under the 15 s renewal that used to bring them back
    for page, other in ((alice, "bob"), (bob, "alice")):
        expect(page.get_by_role("list", name=people)).to_contain_text(other, timeout=6000)
    assert watch.problems == [], "\n".join(watch.problems)
