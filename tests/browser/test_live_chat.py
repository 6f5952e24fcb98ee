"""Two people in two browsers: sign up, invite, open one task, and chat live."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

pytestmark = pytest.mark.browser

PASSWORD = "a long enough passphrase 42"


def sign_up(page: Page, username: str) -> None:
    page.goto("/accounts/signup/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password", exact=True).fill(PASSWORD)
    page.get_by_label("Password confirmation").fill(PASSWORD)
    page.get_by_role("button", name="Sign up").click()
    expect(page.get_by_role("heading", name="Your workspaces")).to_be_visible()


def create_workspace(page: Page, name: str) -> None:
    page.get_by_label("Name").fill(name)
    page.get_by_role("button", name="Create workspace").click()
    expect(page.get_by_role("heading", name=name)).to_be_visible()


def create_invitation_link(page: Page) -> str:
    page.get_by_role("link", name="Members").click()
    page.get_by_role("button", name="Create invitation link").click()
    link = page.get_by_test_id("invite-url").input_value()
    assert "/invite/" in link or "/i/" in link, link
    return link


def create_task(page: Page, title: str) -> str:
    page.get_by_role("link", name="Tasks").click()
    page.get_by_label("Title").fill(title)
    page.get_by_role("button", name="Create task").click()
    expect(page.get_by_role("heading", name=title)).to_be_visible()
    return page.url


def wait_until_live(page: Page) -> None:
    expect(page.locator("#chat-connection")).to_have_text(re.compile("live", re.I))


def send(page: Page, text: str) -> None:
    page.get_by_placeholder(re.compile("Write a message")).fill(text)
    page.get_by_role("button", name="Send").click()


def test_message_posted_by_one_person_appears_live_for_the_other(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice = new_context().new_page()
    bob = new_context().new_page()

    # given: alice signs up, creates a workspace and invites bob, who signs up and joins
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    link = create_invitation_link(alice)
    sign_up(bob, "bob")
    bob.goto(link)
    bob.get_by_role("button", name="Join workspace").click()
    expect(bob.get_by_role("heading", name="Acme")).to_be_visible()

    # and both open the task alice creates
    task_url = create_task(alice, "Plan the offsite")
    bob.goto(task_url)
    wait_until_live(alice)
    wait_until_live(bob)

    # when bob writes, alice sees it without reloading, and the other way round
    send(bob, "I can book the **venue**")
    expect(alice.locator("#messages .message").last).to_contain_text("I can book the venue")
    expect(alice.locator("#messages .message").last.locator(".body strong")).to_have_text("venue")
    send(alice, "Great, thanks bob")
    expect(bob.locator("#messages .message").last).to_contain_text("Great, thanks bob")

    # and the author's own message also arrives once, over the socket
    expect(bob.locator("#messages .message")).to_have_count(2)
    expect(alice.locator("#messages .message")).to_have_count(2)


def test_script_in_a_message_is_shown_as_text_and_never_runs(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice = new_context().new_page()
    bob = new_context().new_page()
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    link = create_invitation_link(alice)
    sign_up(bob, "bob")
    bob.goto(link)
    bob.get_by_role("button", name="Join workspace").click()
    task_url = create_task(alice, "Plan the offsite")
    bob.goto(task_url)
    wait_until_live(alice)
    wait_until_live(bob)
    dialogs: list[str] = []
    alice.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))

    send(bob, "<script>alert('pwned')</script><img src=x onerror=alert('img')> hello")

    last = alice.locator("#messages .message").last
    expect(last).to_contain_text("hello")
    assert last.locator("script, img[onerror]").count() == 0
    alice.reload()
    expect(alice.locator("#messages .message").last).to_contain_text("hello")
    assert dialogs == []
