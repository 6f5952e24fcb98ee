"""A shared plan in the open (issue 30, ADR 0024): a person asks the coordinator to split the
task into steps; its plan arrives as a suggestion; she accepts it; the Writer takes its step
and its own check marks it done; a second person's page sees the plan panel change live, and
the document carries the ticked line. Every page fails the test on a console error, page error
or failed request (flows.Watch). The agents are the default install's (no model call)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.flows import (
    Watch,
    chat_messages,
    owner_and_editor,
    send_chat,
    task_with_agents,
)

pytestmark = pytest.mark.browser


@pytest.mark.timeout(600)
def test_a_coordinators_plan_is_accepted_and_an_agents_step_turns_done_live_on_a_second_page(
    new_context: Callable[[], BrowserContext],
    worker: None,  # production mode runs turns in a separate worker
) -> None:
    alice, bob = owner_and_editor(new_context)
    watch_alice, watch_bob = Watch("alice"), Watch("bob")
    watch_alice.attach(alice)
    watch_bob.attach(bob)
    task_with_agents(alice, bob, ("Coordinator", "Writer"))
    expect(bob.get_by_test_id("plan-step")).to_have_count(0)

    send_chat(alice, "@Coordinator split this into steps")

    expect(chat_messages(bob).filter(has_text="A plan of")).to_have_count(1)
    card = alice.get_by_test_id("suggestion").filter(has_text="## Plan").first
    expect(card).to_contain_text("(@Writer, todo)")
    card.get_by_test_id("accept-suggestion").click()

    # bob's page, live: the plan panel shows the steps, and the Writer's step done, decided
    # by its own check (the workspace's default agent, also on the task, has a step too)
    writers = bob.get_by_test_id("plan-step").filter(has_text="@Writer")
    expect(writers).to_have_count(1)
    expect(writers).to_have_attribute("data-status", "done")
    expect(writers.get_by_test_id("plan-status")).to_contain_text("checked by Writer")
    expect(bob.get_by_test_id("plan-progress")).not_to_contain_text("0 of")
    expect(bob.locator(".cm-content")).to_contain_text("(@Writer, done, checked by Writer)")

    # a person's step: alice ticks it in the panel; bob sees it done, decided by alice
    alices = bob.get_by_test_id("plan-step").filter(has_text="@alice")
    alice.get_by_test_id("plan-step").filter(has_text="@alice").first.get_by_test_id(
        "plan-tick"
    ).click()
    expect(alices.first).to_have_attribute("data-status", "done")
    expect(alices.first.get_by_test_id("plan-status")).to_contain_text("checked by alice")
    assert watch_alice.problems == []  # no console error, page error or failed request
    assert watch_bob.problems == []
