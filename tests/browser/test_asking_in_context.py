"""The default policy in the browser (ask_when_blocked, what every new agent gets): on a task
whose document states the budget, "@Mira plan it" asks only about what is really missing; a
request that contradicts the document gets a question naming both values; and one person's
"just go ahead" does not change how the agent treats another person."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, Page, expect

from tests.browser.flows import (
    add_agent_to_task,
    admin_shell,
    chat_messages,
    create_agent,
    expect_chat_live,
    fake_model_profile,
    owner_and_editor,
    send_chat,
    task_id_of,
)

pytestmark = pytest.mark.browser

DOCUMENT = (
    "## Overview\nA long weekend in Lisbon for the team.\n\n"
    "## Costs\n| Item | Amount |\n| --- | --- |\n| Budget | 1.200 € |\n| Travellers | 15 people |\n"
)


def create_trip_task(page: Page, title: str) -> str:
    page.get_by_role("link", name="Tasks").click()
    page.get_by_label("Title").fill(title)
    page.get_by_label("Start from a template").select_option(value="travel_plan")
    page.get_by_role("button", name="Create task").click()
    expect(page.get_by_role("heading", name=title)).to_be_visible()
    add_agent_to_task(page, page.url, "Mira")
    expect_chat_live(page)
    return page.url


def write_document(task_id: int, text: str) -> None:
    admin_shell(
        "from collab.tasks.models import Task\n"
        "from collab.tasks.documents.edits import replace_in_document\n"
        f"replace_in_document(task=Task.objects.get(pk={task_id}), find='', replace={text!r},"
        " author_label='alice')\n"
    )


def remember(username: str, key: str, value: str, text: str) -> None:
    admin_shell(
        "from django.contrib.auth.models import User\n"
        "from agents.memory.models import MemoryItem\n"
        f"MemoryItem.objects.create(owner=User.objects.get(username={username!r}),"
        f" key={key!r}, value={value!r}, text={text!r})\n"
    )


def question_cards(page: Page):  # type: ignore[no-untyped-def]
    return page.get_by_test_id("question")


def test_the_default_policy_asks_only_what_is_missing_and_names_a_contradiction(
    new_context: Callable[[], BrowserContext],
    worker: None,
) -> None:
    alice, _bob = owner_and_editor(new_context)
    workspace_url = re.sub(r"(/w/\d+/).*", r"\1", alice.url)
    fake_model_profile("Scripted", "edit")
    alice.goto(workspace_url + "agents/")
    create_agent(alice, "Mira", "Scripted")  # no policy chosen: the default

    alice.goto(workspace_url)
    task_url = create_trip_task(alice, "Team weekend")
    write_document(task_id_of(task_url), DOCUMENT)
    alice.reload()
    expect_chat_live(alice)

    # the document states the destination, the budget and the travellers: only the start
    # date is really missing
    send_chat(alice, "@Mira plan it")
    card = question_cards(alice).first
    expect(card).to_contain_text("When does the trip start?")
    expect(card).not_to_contain_text("budget")
    expect(card).not_to_contain_text("Where are you going?")

    # a request that contradicts the document (on a second task with the same document: the
    # first one waits for its answer): the question names both values, first
    alice.goto(workspace_url)
    other_url = create_trip_task(alice, "Team weekend, again")
    write_document(task_id_of(other_url), DOCUMENT)
    alice.reload()
    expect_chat_live(alice)
    send_chat(alice, "@Mira plan it for 12 people")
    conflict = question_cards(alice).first
    expect(conflict).to_contain_text("says 12 people, the document 15: which is right?")
    expect(conflict).to_contain_text("12 / 15 / other")


def test_one_persons_just_go_ahead_does_not_change_how_the_agent_treats_another(
    new_context: Callable[[], BrowserContext],
    worker: None,
) -> None:
    alice, bob = owner_and_editor(new_context)
    workspace_url = re.sub(r"(/w/\d+/).*", r"\1", alice.url)
    fake_model_profile("Scripted", "edit")
    alice.goto(workspace_url + "agents/")
    create_agent(alice, "Mira", "Scripted")
    alice.goto(workspace_url)
    task_url = create_trip_task(alice, "Team weekend")
    remember("bob", "asking", "never", "Just go ahead, don't ask me questions.")

    # bob asked never to be asked: Mira goes ahead and says what she chose
    bob.goto(task_url)
    expect_chat_live(bob)
    send_chat(bob, "@Mira plan a trip to Lisbon")
    expect(chat_messages(bob).last).to_contain_text("I chose the start date", timeout=30_000)
    expect(question_cards(bob)).to_have_count(0)

    # alice said nothing of the kind: the same request from her gets the question
    alice.goto(task_url)
    expect_chat_live(alice)
    send_chat(alice, "@Mira plan a trip to Lisbon")
    expect(question_cards(alice).first).to_contain_text("When does the trip start?")
