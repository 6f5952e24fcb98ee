"""Chat pages: the resync of messages a socket missed, and the chat pane markup."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from collab.tasks.models import Task
from collab.tasks.services import post_message
from tests import factories

pytestmark = pytest.mark.django_db


def _post(task: Task, user: User, body: str) -> int:
    membership = factories.membership_of(task.workspace, user)
    return post_message(membership=membership, task=task, body=body).message.pk


def test_newer_messages_gives_only_what_came_after_the_last_one_seen(as_user, task, alice, bob):
    seen = _post(task, alice, "first")
    _post(task, bob, "second")
    _post(task, alice, "third")

    response = as_user(bob).get(reverse("tasks:newer_messages", args=[task.pk]), {"after": seen})

    page = response.content.decode()
    assert response.status_code == 200
    assert "first" not in page
    assert page.index("second") < page.index("third")


def test_newer_messages_is_readable_by_viewers(as_user, task, alice, carol):
    _post(task, alice, "hello viewers")

    response = as_user(carol).get(reverse("tasks:newer_messages", args=[task.pk]), {"after": 0})

    assert response.status_code == 200
    assert "hello viewers" in response.content.decode()


def test_newer_messages_is_hidden_from_outsiders(as_user, task, mallory):
    response = as_user(mallory).get(reverse("tasks:newer_messages", args=[task.pk]), {"after": 0})

    assert response.status_code == 404


def test_newer_messages_needs_a_message_id(as_user, task, bob):
    response = as_user(bob).get(reverse("tasks:newer_messages", args=[task.pk]), {"after": "x"})

    assert response.status_code == 400


def test_newer_messages_says_when_more_were_missed_than_one_page(as_user, task, alice, settings):
    settings.CHAT_PAGE_SIZE = 2
    for n in range(3):
        _post(task, alice, f"message {n}")

    page = as_user(alice).get(reverse("tasks:newer_messages", args=[task.pk]), {"after": 0})

    assert "reload the page" in page.content.decode()


def test_message_script_is_escaped_on_the_task_page(as_user, task, alice, bob):
    _post(task, bob, "<script>alert(1)</script> hi")

    page = as_user(alice).get(reverse("tasks:detail", args=[task.pk])).content.decode()

    assert "<script>alert(1)" not in page
    assert "hi" in page


def test_task_page_connects_the_chat_pane_to_its_socket(as_user, task, carol):
    page = as_user(carol).get(reverse("tasks:detail", args=[task.pk])).content.decode()

    # with the role the page was rendered with (carol views): a change while away is sent
    assert f'ws-connect="/ws/tasks/{task.pk}/chat?role=viewer"' in page
    assert 'id="chat-connection"' in page
    assert "collab/chat.js" in page
    assert "viewers cannot post" in page
