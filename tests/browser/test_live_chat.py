"""Two people in two browsers: sign up, invite, open one task, and chat live."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import LiveServer
from tests.browser.flows import (
    admin_shell,
    chat_messages,
    create_task,
    create_workspace,
    expect_chat_live,
    owner_and_editor,
    poll_until,
    post_from_outside,
    send_chat,
    sign_up,
    task_id_of,
)

pytestmark = pytest.mark.browser


def alice_and_bob_on_one_task(new_context: Callable[[], BrowserContext]) -> tuple[Page, Page]:
    """alice signs up, creates a workspace and invites bob, who signs up and joins; both open
    the task alice creates."""
    alice, bob = owner_and_editor(new_context)
    task_url = create_task(alice, "Plan the offsite")
    bob.goto(task_url)
    expect_chat_live(alice)
    expect_chat_live(bob)
    return alice, bob


def test_message_posted_by_one_person_appears_live_for_the_other(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice, bob = alice_and_bob_on_one_task(new_context)
    alice.evaluate("window.notReloaded = true")

    send_chat(bob, "I can book the **venue**")

    expect(chat_messages(alice).last).to_contain_text("I can book the venue")
    assert alice.evaluate("window.notReloaded") is True
    expect(chat_messages(alice).last.locator(".body strong")).to_have_text("venue")
    send_chat(alice, "Great, thanks bob")
    expect(chat_messages(bob).last).to_contain_text("Great, thanks bob")
    # the author's own message arrives once, over the socket, like everyone else's
    expect(chat_messages(bob)).to_have_count(2)
    expect(chat_messages(alice)).to_have_count(2)


def test_script_in_a_message_is_shown_as_text_and_never_runs(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice, bob = alice_and_bob_on_one_task(new_context)
    dialogs: list[str] = []
    alice.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    send_chat(bob, "<script>alert('pwned')</script><img src=x onerror=alert('img')> hello")

    last = chat_messages(alice).last
    expect(last).to_contain_text("hello")
    expect(last.locator("script, img")).to_have_count(0)
    alice.reload()
    expect(chat_messages(alice).last).to_contain_text("hello")
    assert dialogs == []


def test_chat_reconnects_after_a_server_restart_and_shows_what_it_missed(
    own_server: LiveServer, page: Page
) -> None:
    sign_up(page, "alice")
    create_workspace(page, "Acme")
    task_id = task_id_of(create_task(page, "Plan the offsite"))
    expect_chat_live(page)

    own_server.stop()
    expect(page.locator("#chat-connection")).to_have_text("reconnecting…")
    post_from_outside(task_id, "alice", "posted while you were away")
    own_server.start()

    # htmx backs off (full jitter, doubling) while the server is down: allow for a long pause
    expect_chat_live(page, timeout=90_000)
    expect(chat_messages(page).last).to_contain_text("posted while you were away")
    send_chat(page, "and live again")
    expect(chat_messages(page).last).to_contain_text("and live again")
    expect(chat_messages(page)).to_have_count(2)


@pytest.mark.daphne_args("--websocket_timeout", "3")
def test_chat_comes_back_after_the_server_ends_the_socket_normally(
    own_server: LiveServer, page: Page
) -> None:
    # Daphne ends every socket after --websocket_timeout (a day by default) with code 1000,
    # which the htmx extension alone does not retry.
    sign_up(page, "alice")
    create_workspace(page, "Acme")
    create_task(page, "Plan the offsite")
    expect_chat_live(page)
    page.evaluate(
        """() => {
          window.chatOpens = 0;
          window.chatCloses = [];
          const on = (name, f) => document.addEventListener(name, f);
          on('htmx:wsOpen', () => window.chatOpens++);
          on('htmx:wsClose', (e) => window.chatCloses.push(e.detail.event.code));
        }"""
    )

    poll_until(page, "window.chatOpens >= 1", timeout=60_000)

    assert 1000 in page.evaluate("window.chatCloses")
    expect_chat_live(page)
    send_chat(page, "still here")
    expect(chat_messages(page).last).to_contain_text("still here")


def test_removed_member_sees_their_chat_disconnected_at_once(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice, bob = alice_and_bob_on_one_task(new_context)

    alice.get_by_role("link", name="Acme").click()
    alice.get_by_role("link", name="Members").click()
    alice.once("dialog", lambda dialog: dialog.accept())  # "Remove bob from Acme? ..."
    alice.locator("tr[data-member='bob']").get_by_role("button", name="Remove").click()

    expect(bob.locator("#chat-connection")).to_have_text("no longer a member")
    expect(bob.locator("#chat-connection")).to_have_attribute("data-state", "closed")


def test_a_member_removed_while_his_chat_was_away_is_told_so_instead_of_reconnecting(
    own_server: LiveServer, new_context: Callable[[], BrowserContext]
) -> None:
    # given bob live on the task, and the server restarting: his socket drops (1006) and no
    # 4403 can reach him
    _alice, bob = alice_and_bob_on_one_task(new_context)
    own_server.stop()
    expect(bob.locator("#chat-connection")).to_have_text("reconnecting…")

    # when he is removed meanwhile, and his page tries again once the server is back
    admin_shell(
        "from collab.workspaces.models import Membership as M\n"
        "from collab.workspaces.services import remove_member\n"
        "acme = dict(workspace__name='Acme')\n"
        "remove_member(actor=M.objects.get(user__username='alice', **acme),"
        " membership=M.objects.get(user__username='bob', **acme))"
    )
    own_server.start()
    bob.evaluate("window.dispatchEvent(new Event('online'))")  # retry now, not after htmx's pause

    # then the refused handshake (1006 again) is read as what it is
    expect(bob.locator("#chat-connection")).to_have_text("no longer a member")
    expect(bob.locator("#chat-connection")).to_have_attribute("data-state", "closed")


def test_real_server_closes_a_socket_that_sends_a_bad_frame_with_4400(page: Page) -> None:
    sign_up(page, "alice")
    create_workspace(page, "Acme")
    task_id = task_id_of(create_task(page, "Plan the offsite"))
    expect_chat_live(page)

    close = page.evaluate(
        """(taskId) => new Promise((resolve) => {
          const ws = new WebSocket(`ws://${location.host}/ws/tasks/${taskId}/chat?format=json`);
          ws.onopen = () => ws.send("this is not json");
          ws.onclose = (event) => resolve(event.code);
        })""",
        task_id,
    )

    assert close == 4400  # Daphne does not pass the reason on; the server log has it
