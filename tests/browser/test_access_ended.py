"""A task page whose reader lost access while it was open locks itself (#32.1).

Removed from the workspace, signed out in another tab, the account deactivated: the sockets
close with 4403 and, before, the editor stayed editable and the chat form stayed, so what the
person typed went nowhere and nothing said so. Now the page stops taking input, says why,
keeps what they typed for them to copy, and offers the way back to their workspaces.

Every page fails the test on a console error, page error or failed request (flows.Watch); the
page's own question "is this task still mine?" (answered 404 once removed) is declared.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.flows import (
    Watch,
    add_agent_to_task,
    admin_shell,
    create_agent,
    create_task,
    expect_chat_live,
    fake_model_profile,
    owner_and_editor,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]

EDITOR = ".cm-content"


def _bob_writing_on_alice_s_task(
    new_context: Callable[[], BrowserContext],
) -> tuple[Page, Page, Watch, str]:
    """alice's task with an agent; bob (an editor, watched) on its page, who typed a line into
    the document and is writing a chat message he has not sent."""
    alice, bob = owner_and_editor(new_context)
    watch = Watch("bob")
    watch.attach(bob)
    fake_model_profile("Model echo", "echo")
    task_url = create_task(alice, "Plan the offsite")
    alice.get_by_role("link", name="Manage agents").click()
    create_agent(alice, "Sage", "Model echo")
    add_agent_to_task(alice, task_url, "Sage")
    alice.get_by_role("link", name="Acme").click()  # the task page's breadcrumb
    alice.get_by_role("link", name="Members").click()
    bob.goto(task_url)
    expect_chat_live(bob)
    expect(bob.locator("[data-collab-editor][data-status=synced]")).to_be_visible()
    bob.locator(EDITOR).click()
    bob.keyboard.type("Notes from bob")
    bob.get_by_placeholder(re.compile("Write a message")).fill("Half a thought")
    return alice, bob, watch, task_url


def _expect_locked(bob: Page) -> None:
    """Nothing on the page takes input any more; what bob typed is still there to copy."""
    expect(bob.locator(EDITOR)).to_have_attribute("contenteditable", "false")
    expect(bob.locator(EDITOR)).to_contain_text("Notes from bob")
    expect(bob.get_by_test_id("unsent-draft")).to_have_value("Half a thought")
    expect(bob.get_by_role("button", name="Send")).to_have_count(0)
    expect(bob.get_by_test_id("ask-Sage")).to_be_disabled()
    expect(bob.get_by_label("Task status")).to_be_disabled()
    ended = bob.get_by_test_id("access-ended")
    expect(ended).to_contain_text("You no longer have access to this task")
    expect(ended).to_contain_text("What you typed is still on this page for you to copy")
    # typing changes nothing
    bob.locator(EDITOR).click()
    bob.keyboard.type(" and more")
    expect(bob.locator(EDITOR)).not_to_contain_text("and more")


def test_a_removed_editors_open_page_locks_keeps_what_he_typed_and_shows_the_way_back(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice, bob, watch, _ = _bob_writing_on_alice_s_task(new_context)

    with watch.allowing("404"):
        alice.once("dialog", lambda dialog: dialog.accept())
        alice.locator("tr[data-member=bob]").get_by_role("button", name="Remove").click()
        _expect_locked(bob)
        ended = bob.get_by_test_id("access-ended")
        expect(ended).to_contain_text("You are no longer a member of its workspace")
    expect(bob.locator("#chat-connection")).to_have_text("no longer a member")

    ended.get_by_role("link", name="Back to your workspaces").click()
    expect(bob.get_by_role("heading", name="Your workspaces")).to_be_visible()
    expect(bob.get_by_role("link", name="Acme")).to_have_count(0)
    assert watch.problems == [], "\n".join(watch.problems)


def test_signing_out_in_another_tab_locks_the_open_task_page_and_offers_to_log_in_again(
    new_context: Callable[[], BrowserContext],
) -> None:
    _alice, bob, watch, _ = _bob_writing_on_alice_s_task(new_context)

    other_tab = watch.attach(bob.context.new_page())
    other_tab.goto("/")
    other_tab.get_by_role("button", name=re.compile("Log out")).click()

    _expect_locked(bob)
    ended = bob.get_by_test_id("access-ended")
    expect(ended).to_contain_text("You were signed out")
    expect(bob.locator("#chat-connection")).to_have_text("signed out")
    ended.get_by_role("link", name="Log in again").click()
    expect(bob).to_have_url(re.compile(r"/accounts/login/\?next=/t/\d+/$"))
    assert watch.problems == [], "\n".join(watch.problems)


def test_a_deactivated_accounts_open_task_page_locks(
    new_context: Callable[[], BrowserContext],
) -> None:
    _alice, bob, watch, _ = _bob_writing_on_alice_s_task(new_context)

    # an administrator switches bob's account off (the admin's "active" box does this)
    admin_shell(
        "from django.contrib.auth.models import User\n"
        "bob = User.objects.get(username='bob')\n"
        "bob.is_active = False\n"
        "bob.save()\n"
    )

    _expect_locked(bob)
    expect(bob.get_by_test_id("access-ended")).to_contain_text("You were signed out")
    assert watch.problems == [], "\n".join(watch.problems)
