"""A fresh workspace has a working teammate: its default agent answers a mention with the
embedded model, streamed, in whole sentences, and the panel names the model once it answered;
a prompt typed into the Ask box is posted in the chat as the person's message."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from agents.llm import embedded
from tests.browser.flows import (
    chat_messages,
    create_task,
    create_workspace,
    expect_chat_live,
    send_chat,
    sign_up,
)

pytestmark = pytest.mark.browser

# The real embedded model on a shared 2-core machine (the default policy makes signal calls
# first): generous waits, and nothing asserts on how long it took.
MODEL_MS = 600_000

STREAM_RECORDER = """() => {
  window.__streamed = [];
  const selector = "#agent-cards [data-agent=Assistant] [data-testid=agent-stream]";
  new MutationObserver(() => {
    const text = document.querySelector(selector)?.textContent.trim();
    if (text) window.__streamed.push(text);
  }).observe(document.body, {childList: true, subtree: true, characterData: true});
}"""


@pytest.mark.timeout(1500)
def test_a_fresh_workspace_has_a_teammate_that_answers_a_mention_in_whole_sentences(
    new_context: Callable[[], BrowserContext],
    worker: None,  # production mode runs turns in a separate worker
) -> None:
    page = new_context().new_page()
    sign_up(page, "ana")
    create_workspace(page, "Lisbon offsite")
    create_task(page, "Plan the offsite")
    expect_chat_live(page)
    card = page.locator("#agent-cards [data-agent=Assistant]")
    expect(card).to_be_visible()  # the default agent is on the new task, before any setup
    expect(card.get_by_test_id("answered-by")).to_have_count(0)

    # The card's stream is cleared when the turn ends, which can be within a poll of the
    # last token: record every text it shows instead of polling for it.
    page.evaluate(STREAM_RECORDER)
    send_chat(page, "@Assistant which neighbourhood should we stay in?")

    reply = page.locator("#messages > li.message.kind-agent").last
    expect(reply).to_be_visible(timeout=MODEL_MS)
    streamed = page.evaluate("() => window.__streamed")  # the page's CSP forbids eval'd strings
    assert streamed, "nothing streamed onto the card before the reply was posted"
    text = reply.locator(".body").inner_text().strip()
    assert re.search(r"[.!?]$", text), text  # a whole sentence, never cut mid-word
    expect(card.get_by_test_id("answered-by")).to_contain_text("SmolLM2", timeout=MODEL_MS)
    expect(card).to_contain_text(f"answered. {embedded.capabilities()}")  # measured figures

    # The Ask box: the prompt becomes ana's chat message, the agent mentioned.
    card.get_by_label("Request for Assistant").fill("what does a hotel in Alfama cost?")
    card.get_by_test_id("ask-Assistant").click()
    asked = chat_messages(page).filter(has_text="@Assistant what does a hotel in Alfama cost?")
    expect(asked).to_have_count(1)
    expect(asked).to_contain_text("ana")
