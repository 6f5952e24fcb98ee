"""create_message: the one way a chat message is stored, for people, agents and the system."""

from __future__ import annotations

from datetime import timedelta

from django.contrib.auth.models import User
from django.utils import timezone

from collab.tasks.models import Message, Task
from collab.tasks.services import create_message, post_message
from collab.workspaces.models import Workspace
from tests.factories import membership_of


def _age(task: Task) -> None:
    Task.objects.filter(pk=task.pk).update(updated_at=timezone.now() - timedelta(days=1))


def test_an_agent_message_moves_the_task_to_the_top_like_a_persons(task: Task) -> None:
    _age(task)

    message = create_message(
        task_id=task.pk, kind=Message.Kind.AGENT, author_name="Mira", body="Here is a plan."
    )

    task.refresh_from_db()
    assert task.updated_at == message.created_at
    assert (message.author, message.author_name, message.kind) == (None, "Mira", "agent")


def test_a_persons_message_is_stored_through_the_same_service(
    workspace: Workspace, bob: User, task: Task
) -> None:
    _age(task)

    posted = post_message(membership=membership_of(workspace, bob), task=task, body="Hi")

    task.refresh_from_db()
    assert task.updated_at == posted.message.created_at
    assert (posted.message.author, posted.message.author_name) == (bob, "bob")
