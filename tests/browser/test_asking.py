"""Asking well, in the browser: an agent whose policy asks from the request's text alone
(``ask_once`` on a task from the ``travel_plan`` template) answers a vague request with one
question card listing what is missing; answering the card in place resumes it, and a request
that states everything gets no question at all."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.flows import (
    add_agent_to_task,
    chat_messages,
    create_agent,
    create_workspace,
    expect_chat_live,
    fake_model_profile,
    send_chat,
    sign_up,
)

pytestmark = pytest.mark.browser

CLEAR = (
    "@Mira Plan a 5-night trip from London to Lisbon, 4 May 2027 until 9 May 2027, "
    "for two people, budget €1,200, relaxed pace."
)


def create_trip_task(page: Page, title: str) -> str:
    """From a workspace page: a task started from the travel plan template, with Mira on it."""
    page.get_by_role("link", name="Tasks").click()
    page.get_by_label("Title").fill(title)
    page.get_by_label("Start from a template").select_option(value="travel_plan")
    page.get_by_role("button", name="Create task").click()
    expect(page.get_by_role("heading", name=title)).to_be_visible()
    add_agent_to_task(page, page.url, "Mira")
    expect_chat_live(page)
    return page.url


def test_vague_request_gets_one_question_card_its_answer_resumes_the_agent_clear_gets_none(
    new_context: Callable[[], BrowserContext],
    worker: None,
) -> None:
    alice = new_context().new_page()
    sign_up(alice, "alice")
    create_workspace(alice, "Acme")
    workspace_url = alice.url
    # an admin configured a fake model that answers with a reply and a document change
    fake_model_profile("Scripted", "edit")
    alice.goto(re.sub(r"/w/(\d+)/.*", r"/w/\1/agents/", workspace_url))
    create_agent(alice, "Mira", "Scripted", policy="ask_once")

    # a vague request: one question card, listing the missing required slots
    alice.goto(workspace_url)
    create_trip_task(alice, "Summer trip")
    send_chat(alice, "@Mira Plan a trip")
    cards = alice.get_by_test_id("question")
    expect(cards).to_have_count(1)
    card = cards.first
    for question in ("Where are you going?", "When does the trip start?", "total budget?"):
        expect(card).to_contain_text(question)
    expect(alice.locator(".agent-status[data-status=waiting]")).to_have_count(1)
    before = chat_messages(alice).count()

    # answering in place (no reload) resumes Mira, who replies and proposes the change
    card.get_by_label("Answer to Mira").fill("Lisbon, from 4 May 2027, budget €1,200.")
    card.get_by_role("button", name="Answer").click()
    expect(card).to_contain_text("Answer from alice: Lisbon, from 4 May 2027, budget €1,200.")
    expect(chat_messages(alice).last).to_contain_text("I added a line to the document.")
    expect(alice.locator(".agent-status[data-status=done]")).to_have_count(1)
    assert chat_messages(alice).count() > before
    expect(alice.get_by_test_id("question")).to_have_count(1)  # it did not ask again

    # a clear request stating every slot: Mira goes ahead without a question card
    alice.goto(workspace_url)
    create_trip_task(alice, "Lisbon in May")
    send_chat(alice, CLEAR)
    expect(chat_messages(alice).last).to_contain_text("I added a line to the document.")
    expect(alice.locator(".agent-status[data-status=done]")).to_have_count(1)
    expect(alice.get_by_test_id("question")).to_have_count(0)
