"""Regression tests of #19: a streamed reply that runs long stays inside its card and the chat
keeps its width (#19.8); the invitation link's Copy button copies it, and "Leave workspace" asks
first, a dismissed question leaving the person a member (#19.13).

Every page fails the test on a console error, page error or failed request (flows.Watch).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Dialog, Page, expect

from tests.browser.flows import (
    WIDTHS,
    Watch,
    add_agent_to_task,
    chat_messages,
    create_agent,
    create_invitation_link,
    create_task,
    create_workspace,
    expect_chat_live,
    fake_model_profile,
    join,
    no_overflow,
    send_chat,
    sign_up,
)

pytestmark = pytest.mark.browser

# A reply that runs long: a 112-character token without a break opportunity (a pasted booking
# reference: no spaces, hyphens or slashes), then many words, so that it streams for a while
# (one word every 300 ms) after the token is on screen.
LONG_TOKEN = "booking_ref_" + "0123456789abcdef" * 6 + "ffff"
LONG_TEXT = "@Mira see " + LONG_TOKEN + " and" * 16

# Widths of the card, its stream and the chat pane, and whether each scrolls sideways.
SIZES_JS = """
() => {
  const card = document.querySelector('#agent-cards [data-agent=Mira]');
  const stream = card.querySelector('[data-testid=agent-stream]');
  const chat = document.getElementById('chat');
  const agents = document.getElementById('agents');
  const box = (el) => el.getBoundingClientRect();
  return {
    card: [card.scrollWidth, card.clientWidth],
    stream: [stream.scrollWidth, stream.clientWidth],
    chat: [chat.scrollWidth, chat.clientWidth, box(chat).width],
    agents: box(agents).width,
    page: [document.documentElement.scrollWidth, document.documentElement.clientWidth],
  };
}
"""


def _sizes_at(page: Page, width: int) -> dict[str, list[float] | float]:
    page.set_viewport_size({"width": width, "height": 900})
    page.wait_for_timeout(150)
    sizes: dict[str, list[float] | float] = page.evaluate(SIZES_JS)
    return sizes


def test_a_long_streamed_reply_stays_inside_its_card_and_the_chat_keeps_its_width(
    new_context: Callable[[], BrowserContext], worker: None
) -> None:
    assert len(LONG_TEXT) <= 200  # the echo behaviour answers the first 200 characters
    watch = Watch("alice")
    alice = watch.attach(new_context().new_page())
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    fake_model_profile("Slow", "echo@300")
    task_url = create_task(alice, "Plan the offsite")
    alice.get_by_role("link", name="Manage agents").click()
    create_agent(alice, "Mira", "Slow")
    add_agent_to_task(alice, task_url, "Mira")
    expect_chat_live(alice)

    send_chat(alice, LONG_TEXT)
    stream = alice.locator("#agent-cards [data-agent=Mira]").get_by_test_id("agent-stream")
    expect(stream).to_contain_text(LONG_TOKEN)  # still streaming: the words after it follow

    problems = []
    for width in WIDTHS:
        sizes = _sizes_at(alice, width)
        for part in ("card", "stream", "page"):
            scroll, client = sizes[part][:2]  # type: ignore[index]
            if scroll > client + 1:
                problems.append(f"at {width} px the {part} scrolls sideways: {scroll} > {client}")
        chat_scroll, chat_client, chat_width = sizes["chat"]  # type: ignore[misc]
        if chat_scroll > chat_client + 1:
            problems.append(f"at {width} px the chat scrolls sideways: {chat_scroll}")
        if width == 1400 and abs(chat_width - sizes["agents"]) > 2:  # type: ignore[operator]
            problems.append(
                f"at 1400 px the chat is {chat_width} px, the agents pane {sizes['agents']}"
            )
        if width == 390 and chat_width > 390:
            problems.append(f"at 390 px the chat is {chat_width} px wide")
    assert problems == [], "\n".join(problems)

    # the finished reply, in the chat, does not widen anything either
    expect(chat_messages(alice).last).to_contain_text(LONG_TOKEN)
    problems = no_overflow(alice, "the task page")
    assert problems == [], "\n".join(problems)
    assert watch.problems == [], "\n".join(watch.problems)


def test_the_copy_button_copies_the_invitation_link(
    new_context: Callable[[], BrowserContext],
) -> None:
    context = new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    watch = Watch("alice")
    alice = watch.attach(context.new_page())
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    link = create_invitation_link(alice)

    alice.get_by_role("button", name="Copy link").click()
    button = alice.locator("#invitations .copy-row button")  # its name changes
    expect(button).to_have_text("Copied")
    assert alice.evaluate("() => navigator.clipboard.readText()") == link
    expect(button).to_have_text("Copy link", timeout=5_000)  # back to its label
    assert watch.problems == [], "\n".join(watch.problems)


def test_leaving_a_workspace_asks_first_and_a_dismissed_question_changes_nothing(
    new_context: Callable[[], BrowserContext],
) -> None:
    alice = new_context().new_page()
    watch = Watch("bob")
    bob = watch.attach(new_context().new_page())
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    link = create_invitation_link(alice)
    sign_up(bob, "bob")
    join(bob, link, "Acme")
    bob.get_by_role("link", name="Members").click()
    members_url = bob.url

    asked: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    bob.on("dialog", dismiss)
    bob.get_by_role("button", name="Leave workspace").click()
    bob.wait_for_timeout(500)  # a form sent without asking would be on its way by now
    assert asked == ["Leave Acme? You lose access to its tasks until someone invites you again."], (
        asked
    )
    assert bob.url == members_url
    bob.reload()
    expect(bob.get_by_role("button", name="Leave workspace")).to_be_visible()  # still a member
    bob.goto("/")
    expect(bob.get_by_role("link", name="Acme")).to_be_visible()
    bob.remove_listener("dialog", dismiss)

    # accepted, bob leaves
    bob.goto(members_url)
    bob.once("dialog", lambda dialog: dialog.accept())
    bob.get_by_role("button", name="Leave workspace").click()
    expect(bob.get_by_text("You left Acme.")).to_be_visible()
    expect(bob.get_by_role("link", name="Acme")).to_have_count(0)
    assert watch.problems == [], "\n".join(watch.problems)


def test_removing_a_member_asks_first_and_a_dismissed_question_changes_nothing(
    new_context: Callable[[], BrowserContext],
) -> None:
    """#32.6: Remove asked nothing; one click took bob out of the workspace."""
    watch = Watch("alice")
    alice = watch.attach(new_context().new_page())
    bob = new_context().new_page()
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    link = create_invitation_link(alice)
    sign_up(bob, "bob")
    join(bob, link, "Acme")
    alice.reload()
    remove = alice.locator("tr[data-member=bob]").get_by_role("button", name="Remove")

    asked: list[str] = []

    def dismiss(dialog: Dialog) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    alice.on("dialog", dismiss)
    remove.click()
    alice.wait_for_timeout(500)  # a form sent without asking would be on its way by now
    assert len(asked) == 1, asked
    assert asked[0].startswith("Remove bob from Acme?"), asked
    alice.reload()
    expect(alice.locator("tr[data-member=bob]")).to_be_visible()  # still a member
    alice.remove_listener("dialog", dismiss)

    # accepted, bob is removed
    alice.once("dialog", lambda dialog: dialog.accept())
    remove.click()
    expect(alice.locator("tr[data-member=bob]")).to_have_count(0)
    assert watch.problems == [], "\n".join(watch.problems)
