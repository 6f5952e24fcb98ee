"""Regression tests of #19 on the task page: versions saved when typing pauses (#19.5), an agent
typing a direct edit crashes no editor (#19.2), the question card's numbered questions and boxes
(#19.7).

Every page fails the test on a console error, page error or failed request (flows.Watch).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from django.conf import settings
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.conftest import LiveServer
from tests.browser.flows import (
    Watch,
    add_agent_to_task,
    admin_shell,
    create_agent,
    create_invitation_link,
    create_task,
    create_workspace,
    expect_chat_live,
    fake_model_profile,
    join,
    no_overflow,
    sign_up,
    task_id_of,
)

pytestmark = [pytest.mark.browser, pytest.mark.timeout(400)]

PAUSE_SECONDS = 2


@pytest.fixture
def own_server(monkeypatch: pytest.MonkeyPatch, transactional_db: None) -> Iterator[LiveServer]:
    """A server whose agents type their direct edits live (their cursor moves as they write)
    and that saves a version after a short pause in typing."""
    monkeypatch.setenv("COLLAB_TEST_TYPING_SECONDS", "6")
    monkeypatch.setenv("DOCUMENT_VERSION_PAUSE_SECONDS", str(PAUSE_SECONDS))
    server = LiveServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


def _person(new_context: Callable[[], BrowserContext], watch: Watch) -> Page:
    return watch.attach(new_context().new_page())


def _versions(history: Page, url: str, count: int) -> None:
    """Reload the history page until it lists ``count`` versions (the room saves them on its
    tick, a moment after the pause)."""
    for _ in range(40):
        history.goto(url)
        if history.locator("[data-testid=versions] > li").count() >= count:
            break
        history.wait_for_timeout(500)
    expect(history.locator("[data-testid=versions] > li")).to_have_count(count)


def test_a_version_is_saved_when_typing_pauses_with_everything_typed_before_the_pause(
    own_server: LiveServer, new_context: Callable[[], BrowserContext]
) -> None:
    watch = Watch("alice")
    alice = _person(new_context, watch)
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    task_url = create_task(alice, "Plan the offsite")
    expect(alice.locator("[data-collab-editor][data-status=synced]")).to_be_visible()
    history_url = f"/t/{task_id_of(task_url)}/document/history/"

    # one stretch of typing, in two bursts shorter than the pause
    alice.locator(".cm-content").click()
    alice.keyboard.type("## Overview\n", delay=20)
    alice.wait_for_timeout(PAUSE_SECONDS * 1000 // 3)
    alice.keyboard.type("Two days in Lisbon.", delay=20)

    # the page stays open (the room stays loaded); the history, in another tab
    history = watch.attach(alice.context.new_page())
    _versions(history, history_url, 1)
    diff = history.get_by_test_id("diff")
    expect(diff).to_contain_text("Two days in Lisbon.")  # not just the first keystrokes
    expect(history.get_by_test_id("is-current")).to_have_count(1)

    # the next stretch after a pause is a version of its own
    alice.bring_to_front()
    alice.keyboard.type(" Café ☕", delay=20)
    _versions(history, history_url, 2)
    expect(history.get_by_test_id("diff")).to_contain_text("Two days in Lisbon. Café ☕")
    expect(history.get_by_test_id("is-current")).to_have_count(1)
    assert watch.problems == [], "\n".join(watch.problems)


def test_an_agent_typing_a_direct_edit_shows_its_cursor_and_crashes_no_editor(
    own_server: LiveServer, new_context: Callable[[], BrowserContext], worker: None
) -> None:
    """#19.2: y-codemirror.next's remote-selection plugin crashed ("Cannot read properties of
    undefined (reading 'client')") on every open page when a cursor's RelativePosition lacked
    a field: the agent's, or a person's at the end of the text after the server's check."""
    assert settings.AGENTS_TYPING_SECONDS == 0  # this test's own server types live instead
    watches = {name: Watch(name) for name in ("alice", "bob")}
    alice = _person(new_context, watches["alice"])
    bob = _person(new_context, watches["bob"])
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    link = create_invitation_link(alice)
    sign_up(bob, "bob")
    join(bob, link, "Acme")
    fake_model_profile("Model draft", "draft")  # a long edit: typed in many steps
    task_url = create_task(alice, "Plan the offsite")
    alice.get_by_role("link", name="Manage agents").click()
    alice.get_by_label("Document changes").select_option(value="may_edit")
    create_agent(alice, "Eddie", "Model draft")
    add_agent_to_task(alice, task_url, "Eddie")
    bob.goto(task_url)
    for page in (alice, bob):
        expect_chat_live(page)
        expect(page.locator("[data-collab-editor][data-status=synced]")).to_be_visible()
    alice.locator(".cm-content").click()
    alice.keyboard.type("Venue ideas 🌸\n")
    expect(bob.locator(".cm-content")).to_contain_text("Venue ideas")

    alice.get_by_test_id("ask-Eddie").click()

    # while Eddie types, both pages show where (a named remote cursor)
    for page in (alice, bob):
        expect(page.locator(".cm-ySelectionInfo", has_text="Eddie")).to_have_count(1)
    for page in (alice, bob):
        expect(page.locator(".cm-content")).to_contain_text("Summarize the open questions")
    # people's own cursors, at the end of the text, still show on the other page
    bob.locator(".cm-content").click()
    bob.keyboard.press("Control+End")
    bob.keyboard.type("!")
    expect(alice.locator(".cm-ySelectionInfo", has_text="bob")).to_have_count(1)
    alice.locator(".cm-content").click()
    alice.keyboard.press("Control+End")
    alice.keyboard.type("?")
    expect(bob.locator(".cm-ySelectionInfo", has_text="alice")).to_have_count(1)
    problems = [f"{w.who}: {p}" for w in watches.values() for p in w.problems]
    assert problems == [], "\n".join(problems)


def test_the_question_card_lists_numbered_questions_and_nothing_spills_out(
    new_context: Callable[[], BrowserContext],
) -> None:
    watch = Watch("alice")
    alice = _person(new_context, watch)
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    fake_model_profile("Model ask", "ask")
    task_url = create_task(alice, "Plan the offsite")
    alice.get_by_role("link", name="Manage agents").click()
    create_agent(alice, "Quinn", "Model ask")
    add_agent_to_task(alice, task_url, "Quinn")
    # a turn's question message with several questions (agents/policies/asking.py's form)
    text = (
        "Before I start:\n1. Which dates work for everyone?\n"
        "2. What is the budget per person (under 500 € / 500-1000 € / other)?\n"
        "3. Should we book_a_very_long_unbroken_venue_name_without_spaces_anywhere_here?"
    )
    admin_shell(
        "from agents.models import Agent, Question\n"
        "agent = Agent.objects.get(name='Quinn')\n"
        f"Question.objects.create(task_id={task_id_of(task_url)}, agent=agent, text={text!r})\n"
    )
    alice.goto(task_url)
    card = alice.get_by_test_id("question").first
    items = card.locator("[data-testid=question-text] li")
    expect(items).to_have_count(3)
    tops = [items.nth(i).bounding_box() for i in range(3)]
    assert all(tops), tops
    assert tops[0]["y"] < tops[1]["y"] < tops[2]["y"], "the questions run into one line"  # type: ignore[index]
    expect(card).to_contain_text("Before I start:")

    # the comment box of "Not helpful" and its Save button stay in the card's panel
    feedback = alice.locator(".with-feedback", has=card).get_by_test_id("feedback")
    feedback.get_by_role("button", name="Not helpful").click()
    feedback = alice.locator(".with-feedback", has=card).get_by_test_id("feedback")
    expect(feedback.get_by_test_id("feedback-comment")).to_be_visible()
    expect(feedback.get_by_test_id("unnecessary")).to_be_visible()
    problems = no_overflow(alice, "the task page")
    assert problems == [], "\n".join(problems)
    card.get_by_label("Answer to Quinn").fill("The dates first")
    card.get_by_role("button", name="Answer").click()
    expect(alice.get_by_test_id("question").first).to_contain_text("Answer from alice")
    assert watch.problems == [], "\n".join(watch.problems)
