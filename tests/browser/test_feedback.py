"""A person gives an agent feedback: thumbs down with a comment on its chat message, and "this
question was unnecessary" on its question card. A second person's page shows the counts live,
and everything is still there after a reload."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.flows import (
    add_agent_to_task,
    chat_messages,
    create_agent,
    create_task,
    expect_chat_live,
    fake_model_profile,
    owner_and_editor,
)

pytestmark = pytest.mark.browser


def test_person_rates_an_agent_message_and_marks_its_question_unnecessary(
    new_context: Callable[[], BrowserContext],
    worker: None,
) -> None:
    alice, bob = owner_and_editor(new_context)
    fake_model_profile("Curious", "ask")
    task_url = create_task(alice, "Plan the offsite")
    alice.get_by_role("link", name="Manage agents").click()
    create_agent(alice, "Mira", "Curious")
    add_agent_to_task(alice, task_url, "Mira")
    bob.goto(task_url)
    expect_chat_live(alice)
    expect_chat_live(bob)

    # Mira asks a question: a chat message and a question card, both with feedback buttons
    alice.get_by_test_id("ask-Mira").click()
    message = chat_messages(alice).last
    expect(message).to_contain_text("Which part should I start with?")
    question = alice.locator(".with-feedback", has=alice.get_by_test_id("question")).first
    expect(question).to_contain_text("Which part should I start with?")

    # 👎 on the message, then a comment in the field the thumb revealed
    message.get_by_test_id("thumb-down").click()
    expect(message.get_by_test_id("thumb-down")).to_have_attribute("aria-pressed", "true")
    message.get_by_test_id("feedback-comment").fill("Just <start> anywhere")
    message.get_by_role("button", name="Save").click()
    expect(message.get_by_test_id("feedback-comment")).to_have_value("Just <start> anywhere")
    # one click: the question was unnecessary
    question.get_by_test_id("unnecessary").click()
    expect(question.get_by_test_id("unnecessary")).to_have_text(
        "You marked this question unnecessary (undo)"
    )

    # bob's page shows the counts live, not alice's choice
    bobs_message = chat_messages(bob).last
    expect(bobs_message.get_by_test_id("feedback-counts")).to_contain_text("1 not helpful")
    expect(bobs_message.get_by_test_id("thumb-down")).to_have_attribute("aria-pressed", "false")
    bobs_question = bob.locator(".with-feedback", has=bob.get_by_test_id("question")).first
    expect(bobs_question.get_by_test_id("feedback-counts")).to_contain_text(
        "1 found it unnecessary"
    )

    # after a reload alice still sees what she chose
    alice.reload()
    message = chat_messages(alice).last
    expect(message.get_by_test_id("thumb-down")).to_have_attribute("aria-pressed", "true")
    expect(message.get_by_test_id("thumb-up")).to_have_attribute("aria-pressed", "false")
    expect(message.get_by_test_id("feedback-comment")).to_have_value("Just <start> anywhere")
    question = alice.locator(".with-feedback", has=alice.get_by_test_id("question")).first
    expect(question.get_by_test_id("feedback")).to_have_attribute("data-unnecessary", "true")

    # clicking the same thumb again takes the rating back
    message.get_by_test_id("thumb-down").click()
    expect(message.get_by_test_id("thumb-down")).to_have_attribute("aria-pressed", "false")
    expect(bobs_message.get_by_test_id("feedback-counts")).not_to_contain_text("not helpful")
