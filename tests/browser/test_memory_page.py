"""The "What agents remember about me" page in Chromium: remember from chat, edit, pin, delete,
switch memory off, forget everything; and another person never sees any of it."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.flows import create_task, create_workspace, expect_chat_live, send_chat, sign_up

pytestmark = pytest.mark.browser


def test_a_person_controls_what_agents_remember_about_them(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice = new_context().new_page()
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    create_task(alice, "Plan the offsite")
    expect_chat_live(alice)

    # given: something remembered from chat, and something added on the page
    send_chat(alice, "Remember that I prefer bullet points")
    notice = alice.get_by_test_id("chat-notice")
    expect(notice).to_contain_text("Remembered for you, everywhere: “I prefer bullet points”.")
    notice.get_by_role("link", name="Memory").click()
    expect(alice.get_by_role("heading", name="What agents remember about me")).to_be_visible()
    items = alice.locator("#memory-sections li[data-item]")
    expect(items).to_have_count(1)
    expect(items.first).to_contain_text("I prefer bullet points")
    expect(items.first).to_contain_text("list_style=bullets")
    alice.get_by_label("What should agents remember?").fill("My manager is Priya")
    alice.get_by_role("button", name="Remember").click()
    expect(items).to_have_count(2)

    # edit
    alice.get_by_role("link", name="I prefer bullet points").click()
    alice.get_by_label("Text").fill("I prefer short bullet points")
    alice.get_by_role("button", name="Save").click()
    expect(items.filter(has_text="I prefer short bullet points")).to_have_count(1)

    # pin, then delete the other one
    alice.locator("li[data-item]", has_text="short bullet points").get_by_role(
        "button", name="Pin"
    ).click()
    expect(
        alice.locator("li[data-item]", has_text="short bullet points").get_by_role(
            "button", name="Unpin"
        )
    ).to_be_visible()
    alice.get_by_role("button", name="Delete “My manager is Priya”").click()
    expect(items).to_have_count(1)

    # search
    alice.get_by_label("Search memory").fill("manager")
    expect(alice.locator("#memory-sections")).to_contain_text("Nothing matches")
    alice.get_by_label("Search memory").fill("bullet")
    expect(items).to_have_count(1)

    # another person sees none of it, even with the item's address
    item_url = alice.get_by_role("link", name="I prefer short bullet points").get_attribute("href")
    bob = new_context().new_page()
    sign_up(bob, "bob")
    bob.get_by_role("link", name="Memory").click()
    expect(bob.locator("#memory-sections li[data-item]")).to_have_count(0)
    assert item_url is not None
    assert bob.goto(item_url).status == 404  # type: ignore[union-attr]

    # switch memory off: the page says so
    alice.goto("/memory/")
    alice.get_by_label("Agents may remember things about me").uncheck()
    alice.get_by_role("button", name="Save settings").click()
    expect(alice.get_by_test_id("memory-off")).to_be_visible()
    alice.get_by_label("Agents may remember things about me").check()
    alice.get_by_role("button", name="Save settings").click()
    expect(alice.get_by_test_id("memory-off")).to_have_count(0)

    # forget everything
    alice.get_by_label(re.compile("Type “forget everything”")).fill("forget everything")
    alice.get_by_role("button", name="Forget everything").click()
    expect(alice.get_by_text(re.compile("Forgot everything"))).to_be_visible()
    expect(items).to_have_count(0)
