"""A person asks an agent, watches its reply stream in, accepts its suggestion, and a second
person sees the document change. The agent uses a fake model configured like an admin would."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from playwright.sync_api import BrowserContext, expect

from tests.browser.flows import (
    add_agent_to_task,
    admin_shell,
    chat_messages,
    create_agent,
    create_task,
    expect_chat_live,
    fake_model_profile,
    owner_and_editor,
    send_chat,
    task_id_of,
)

pytestmark = pytest.mark.browser


def test_person_asks_an_agent_watches_it_stream_and_accepts_its_suggestion(
    new_context: Callable[[], BrowserContext], worker: None
) -> None:
    alice, bob = owner_and_editor(new_context)
    # An admin configured a (fake, slow-streaming) model profile.
    fake_model_profile("Scripted", "suggest@150")

    # alice creates the agent from the task page's "Manage agents" link, then adds it
    task_url = create_task(alice, "Plan the offsite")
    alice.get_by_role("link", name="Manage agents").click()
    create_agent(alice, "Mira", "Scripted")
    add_agent_to_task(alice, task_url, "Mira")
    bob.goto(task_url)
    expect_chat_live(alice)
    expect_chat_live(bob)

    # Mira is listed on the task (idle) until she works on it
    working = "[data-role=presence] .kind-agent[data-name=Mira]"
    expect(bob.locator(f"{working}.is-idle")).to_have_count(1)

    # alice asks; both pages watch the reply arrive word by word, and see Mira present meanwhile
    alice.get_by_test_id("ask-Mira").click()
    expect(bob.locator(f"{working}:not(.is-idle)")).to_have_count(1)
    mira_on_bobs_page = bob.locator("#agent-cards [data-agent=Mira]")
    expect(mira_on_bobs_page.get_by_test_id("agent-stream")).to_contain_text("I propose")
    expect(chat_messages(bob).last).to_contain_text("I propose adding a line to the document.")
    expect(alice.locator("#agent-cards [data-agent=Mira] .agent-status")).to_contain_text(
        "answered by Scripted (test model)"
    )
    expect(bob.locator(f"{working}.is-idle")).to_have_count(1)  # her turn is over

    # the suggestion card arrives live; alice accepts it and bob sees the document change
    card = alice.get_by_test_id("suggestion").first
    expect(card).to_contain_text("Agreed next step")
    card.get_by_test_id("accept-suggestion").click()
    expect(bob.locator(".cm-content")).to_contain_text("Agreed next step")  # the live editor
    expect(bob.get_by_test_id("suggestion").first).to_contain_text("Accepted")


def test_an_agent_first_mentioned_in_the_chat_appears_on_open_pages_and_answers_live(
    new_context: Callable[[], BrowserContext], worker: None
) -> None:
    alice, bob = owner_and_editor(new_context)
    fake_model_profile("Slow", "echo@150")
    task_url = create_task(alice, "Plan the offsite")
    alice.get_by_role("link", name="Manage agents").click()
    create_agent(alice, "Mira", "Slow")  # in the workspace, not on the task
    alice.goto(task_url)
    bob.goto(task_url)
    expect_chat_live(alice)
    expect_chat_live(bob)
    # The workspace's default agent is on the task; Mira is not yet
    expect(alice.locator("#agent-cards [data-agent=Assistant]")).to_be_visible()
    expect(alice.locator("#agent-cards [data-agent=Mira]")).to_have_count(0)

    send_chat(bob, "@Mira hello there")

    # no reload: alice's page gets Mira's card, then her reply streams into it
    card = alice.locator("[data-agent=Mira]")
    expect(card).to_be_visible()
    expect(card.get_by_test_id("agent-stream")).to_contain_text("Noted")
    expect(card.locator(".agent-status")).to_contain_text("Done")
    expect(chat_messages(alice).last).to_contain_text("Noted: @Mira hello there")
    expect(bob.get_by_label("Agent to add")).to_have_count(0)  # nothing left to add
    # and the document's presence list has her, idle once her turn is over
    idle = "[data-role=presence] .kind-agent[data-name=Mira].is-idle"
    expect(alice.locator(idle)).to_have_count(1)


def test_an_agent_nobody_answered_says_what_it_assumed_and_an_editor_undoes_it(
    new_context: Callable[[], BrowserContext], worker: None
) -> None:
    alice, bob = owner_and_editor(new_context)
    task_url = create_task(alice, "Plan the offsite")
    task_id = task_id_of(task_url)
    # An owner configured Mira (may edit, asks first) and the document has a first line.
    admin_shell(
        "from agents.models import Agent, ModelProfile\n"
        "from collab.tasks import documents\n"
        "from collab.tasks.models import Task\n"
        f"task = Task.objects.get(pk={task_id})\n"
        "documents.apply_text_edit(task=task, new_text='Offsite plan', author_label='alice')\n"
        "profile = ModelProfile.objects.create(name='Scripted', provider='fake', model='ask')\n"
        "agent = Agent.objects.create(workspace=task.workspace, name='Mira', mode='may_edit',\n"
        "    model_profile=profile, question_timeout_minutes=10)\n"
        "agent.tasks.add(task)\n"
    )
    alice.goto(task_url)
    bob.goto(task_url)
    expect_chat_live(bob)

    # alice asks Mira, who asks a question back; nobody answers it
    alice.get_by_test_id("ask-Mira").click()
    expect(bob.get_by_test_id("question").first).to_contain_text("Which part should I start")
    # ten minutes later (the clock moved on): the timeout job resumes Mira, who edits
    admin_shell(
        "from datetime import timedelta\n"
        "from django.utils import timezone\n"
        "from agents import jobs\n"
        "from agents.engine import runner\n"
        "from agents.models import ModelProfile, Question\n"
        "ModelProfile.objects.filter(name='Scripted').update(model='edit')\n"
        "question = Question.objects.get()\n"
        "Question.objects.filter(pk=question.pk).update(\n"
        "    created_at=timezone.now() - timedelta(minutes=11))\n"
        "turn_id = jobs.question_timeout_job(question.pk)\n"
        "runner.run_turn(turn_id=turn_id)  # as a worker would (the real one may win the race)\n"
    )
    bob.reload()  # the shell's events do not reach pages in embedded mode
    expect(bob.locator(".cm-content")).to_contain_text("Book the venue")
    notice = bob.get_by_test_id("assumption").locator("xpath=..")
    expect(notice).to_contain_text("(no answer within 10 min)")
    expect(bob.get_by_test_id("question").first).to_contain_text("No answer within 10 min")

    # bob undoes it: the document is back as it was, live, and the question is open again
    bob.get_by_test_id("undo-assumption").click()
    expect(bob.locator(".cm-content")).not_to_contain_text("Book the venue")
    expect(bob.locator(".cm-content")).to_contain_text("Offsite plan")
    expect(notice).to_contain_text("Undone by bob")
    expect(chat_messages(bob).last).to_contain_text("bob undid Mira's assumption")
    expect(bob.get_by_test_id("question").first.get_by_role("textbox")).to_be_visible()
