"""The chat says what happened (#19.9): a stopped turn is announced to everyone, and an @name
that is nobody is answered, to its author, instead of silence."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User

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
