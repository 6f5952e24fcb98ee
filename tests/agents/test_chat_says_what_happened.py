"""The chat says what happened (#19.9): a stopped turn is announced to everyone, and an @name
that is nobody is answered, to its author, instead of silence."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from agents.models import Agent, Trigger
from agents.services import turns as turn_services
from collab.tasks.models import Message, Task
from collab.tasks.services import post_message
from tests import factories

pytestmark = pytest.mark.django_db


def test_stopping_an_agent_says_so_in_the_chat(
    task: Task, bob: User, make_agent: Callable[..., Agent]
) -> None:
    mira = make_agent("Mira")
    mira.tasks.add(task)
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)

    turn_services.cancel_turn(membership=factories.membership_of(task.workspace, bob), turn=turn)

    note = Message.objects.get(task=task)
    assert (note.kind, note.body) == (Message.Kind.SYSTEM, "bob stopped Mira.")


def test_a_mention_of_nobody_tells_its_author_who_can_be_asked(
    task: Task, bob: User, make_agent: Callable[..., Agent]
) -> None:
    make_agent("Mira")

    posted = post_message(
        membership=factories.membership_of(task.workspace, bob), task=task, body="@Nobody help"
    )

    assert posted.memory_notice == (
        "Nobody here is called @Nobody, so no agent was asked. Agents here: @Mira."
    )


def test_mentions_of_agents_and_people_get_no_notice(
    task: Task, bob: User, make_agent: Callable[..., Agent]
) -> None:
    make_agent("Mira")

    posted = post_message(
        membership=factories.membership_of(task.workspace, bob), task=task, body="@mira and @Alice"
    )

    assert posted.memory_notice == ""


def _notice_after_posting(client: Client, task: Task, body: str) -> str:
    """The chat notice of the answer to the chat form (htmx), as its author sees it."""
    response = client.post(
        reverse("tasks:post_message", args=[task.pk]), {"body": body}, HTTP_HX_REQUEST="true"
    )
    assert response.status_code == 200
    html = response.content.decode()
    return html[html.index('id="chat-notice"') :]


def test_a_notice_about_a_mention_of_nobody_has_no_memory_link(
    task: Task, bob: User, as_user: Callable[[User], Client], make_agent: Callable[..., Agent]
) -> None:
    """#32.9: every chat notice ended with a "Memory" link, this one too."""
    make_agent("Mira")

    notice = _notice_after_posting(as_user(bob), task, "@Nobody help")

    assert "Nobody here is called @Nobody" in notice
    assert reverse("memory:page") not in notice
    assert ">Memory</a>" not in notice


def test_a_notice_about_what_was_remembered_links_to_the_memory_page(
    task: Task, bob: User, as_user: Callable[[User], Client]
) -> None:
    notice = _notice_after_posting(as_user(bob), task, "remember that I prefer bullet points")

    assert "Remembered for you" in notice
    assert f'<a href="{reverse("memory:page")}">Memory</a>' in notice
