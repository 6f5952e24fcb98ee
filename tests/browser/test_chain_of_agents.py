"""A chain of agents in the open (issue 30): a person asks the Writer for a draft and a review;
the Writer's hand-off and the Reviewer's answer appear live on a second person's page, and the
review page shows the chain as one tree. Every page fails the test on a console error,
page error or failed request (flows.Watch). The agents are the default install's, answering with
the built-in skills (no model call)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.flows import (
    Watch,
    admin_shell,
    chat_messages,
    create_task,
    expect_chat_live,
    owner_and_editor,
    send_chat,
    task_id_of,
    task_with_agents,
)

pytestmark = pytest.mark.browser


@pytest.mark.timeout(600)
def test_a_writer_hands_its_draft_to_a_reviewer_seen_live_and_on_the_review_page(
    new_context: Callable[[], BrowserContext],
    worker: None,  # production mode runs turns in a separate worker
) -> None:
    alice, bob = owner_and_editor(new_context)
    watch_alice, watch_bob = Watch("alice"), Watch("bob")
    watch_alice.attach(alice)
    watch_bob.attach(bob)
    task_url = task_with_agents(alice, bob, ("Writer", "Reviewer"))
    task_id = task_id_of(task_url)

    send_chat(alice, "@Writer draft the plan and ask @Reviewer to check it")

    hand_off = chat_messages(bob).filter(has_text="@Reviewer please check this draft")
    expect(hand_off).to_have_count(1)  # on bob's page, live
    expect(hand_off.get_by_test_id("hops")).to_contain_text("Reviewer")
    answer = chat_messages(bob).filter(has_text="I checked Writer's draft")
    expect(answer).to_have_count(1)
    expect(answer).to_contain_text("Reviewer")
    # the reviewer's suggestion adds what the draft lacks; alice accepts the draft, then it
    review = alice.get_by_test_id("suggestion").filter(has_text="what the draft still needs")
    expect(review).to_have_count(1)
    draft = alice.get_by_test_id("suggestion").filter(has_not_text="what the draft still needs")
    draft.first.get_by_test_id("accept-suggestion").click()
    review.get_by_test_id("accept-suggestion").click()
    expect(alice.locator(".cm-content")).to_contain_text("Review: what the draft still needs")
    expect(bob.locator(".cm-content")).to_contain_text("Review: what the draft still needs")

    alice.goto(f"/review/tasks/{task_id}/")
    tree = alice.get_by_test_id("chain-tree")
    expect(tree).to_have_count(1)
    expect(tree).to_contain_text("Writer")
    expect(tree).to_contain_text("Reviewer")
    expect(tree.get_by_test_id("chain-hops")).to_contain_text("Writer → Reviewer")
    assert watch_alice.problems == []  # no console error, page error or failed request
    assert watch_bob.problems == []


@pytest.mark.timeout(600)
def test_a_looping_pair_is_stopped_by_the_guard_in_sight_and_a_person_lets_it_go_on(
    new_context: Callable[[], BrowserContext],
    worker: None,
) -> None:
    alice, bob = owner_and_editor(new_context)
    watch_alice, watch_bob = Watch("alice"), Watch("bob")
    watch_alice.attach(alice)
    watch_bob.attach(bob)
    alice.goto("/")
    alice.get_by_role("link", name="Acme").click()
    task_url = create_task(alice, "Plan the offsite")
    task_id = task_id_of(task_url)
    admin_shell(  # two agents that hand the work straight back (the "relay" fake model)
        "from agents.models import Agent, ModelProfile\n"
        "from collab.tasks.models import Task\n"
        f"task = Task.objects.get(pk={task_id})\n"
        "profile = ModelProfile.objects.create(name='Relay', provider='fake', model='relay')\n"
        "for name in ('Ace', 'Bee'):\n"
        "    agent = Agent.objects.create(workspace=task.workspace, name=name,\n"
        "        model_profile=profile)\n"
        "    agent.tasks.add(task)\n"
    )
    bob.goto(task_url)
    alice.goto(task_url)
    expect_chat_live(alice)
    expect_chat_live(bob)

    send_chat(alice, "@Ace and then @Bee, look at this")

    notice = chat_messages(bob).filter(has_text="Stopped this chain of agents: the loop detector")
    expect(notice).to_have_count(1)  # live on bob's page: which guard, why, what it cost
    expect(notice).to_contain_text("tokens")
    expect(notice).to_contain_text("“continue”")

    send_chat(bob, "continue")  # the person's control: the held hop goes on, and loops again

    back = chat_messages(alice).filter(has_text="@Bee please have another look.")
    expect(back).to_have_count(2)
    expect(chat_messages(alice).filter(has_text="Stopped this chain of agents")).to_have_count(2)

    alice.goto(f"/review/tasks/{task_id}/")
    expect(alice.get_by_test_id("chain-tree")).to_contain_text("loop detector")
    assert watch_alice.problems == []
    assert watch_bob.problems == []
