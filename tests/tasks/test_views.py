from __future__ import annotations

import pytest
from django.urls import reverse

from collab.tasks.models import Message, Task, TaskStatus
from collab.tasks.services import post_message
from tests.factories import make_task, membership_of

pytestmark = pytest.mark.django_db


def test_editors_create_tasks_with_a_title_and_goal(as_user, workspace, bob):
    response = as_user(bob).post(
        reverse("tasks:list", args=[workspace.pk]), {"title": "Offsite", "goal": "Pick a venue"}
    )

    task = Task.objects.get(title="Offsite")
    assert response.status_code == 302
    assert response["Location"] == reverse("tasks:detail", args=[task.pk])
    assert (task.goal, task.status, task.document.text) == ("Pick a venue", TaskStatus.OPEN, "")


def test_viewers_cannot_create_tasks(as_user, workspace, carol):
    response = as_user(carol).post(reverse("tasks:list", args=[workspace.pk]), {"title": "Sneaky"})

    assert response.status_code == 403
    assert not Task.objects.exists()


def test_a_task_without_a_title_is_refused_with_400(as_user, workspace, alice):
    response = as_user(alice).post(reverse("tasks:list", args=[workspace.pk]), {"title": " "})

    assert response.status_code == 400
    assert b"This field is required" in response.content
    assert not Task.objects.exists()


def test_the_task_list_filters_by_status(as_user, workspace, alice):
    make_task(workspace, "Draft the brief")
    done = make_task(workspace, "Book the room")
    Task.objects.filter(pk=done.pk).update(status=TaskStatus.DONE)
    client = as_user(alice)

    everything = client.get(reverse("tasks:list", args=[workspace.pk]))
    only_done = client.get(reverse("tasks:list", args=[workspace.pk]), {"status": "done"})

    assert b"Draft the brief" in everything.content
    assert b"Book the room" in everything.content
    assert b"Draft the brief" not in only_done.content
    assert b"Book the room" in only_done.content


def test_the_status_filter_answers_htmx_with_just_the_rows(as_user, workspace, alice):
    make_task(workspace, "Draft the brief")

    response = as_user(alice).get(
        reverse("tasks:list", args=[workspace.pk]), {"status": "open"}, HTTP_HX_REQUEST="true"
    )

    assert response.content.lstrip().startswith(b'<ul id="task-rows"')
    assert b"Draft the brief" in response.content


def test_the_task_list_costs_the_same_queries_for_many_tasks(
    as_user, workspace, alice, django_assert_max_num_queries
):
    for number in range(30):
        make_task(workspace, f"Task {number}")
    client = as_user(alice)

    with django_assert_max_num_queries(6):
        client.get(reverse("tasks:list", args=[workspace.pk]))


@pytest.mark.parametrize("user", ["alice", "bob", "carol"])
def test_members_open_the_task_page_with_document_chat_and_agents(as_user, task, user, request):
    response = as_user(request.getfixturevalue(user)).get(reverse("tasks:detail", args=[task.pk]))

    assert response.status_code == 200
    for area in (b'id="document"', b'aria-label="Chat"', b'id="agents"'):
        assert area in response.content
    assert f'ws-connect="/ws/tasks/{task.pk}/chat?role='.encode() in response.content


@pytest.mark.parametrize(
    ("name", "method"),
    [
        ("tasks:detail", "get"),
        ("tasks:older_messages", "get"),
        ("tasks:post_message", "post"),
        ("tasks:status", "post"),
    ],
)
def test_outsiders_get_404_for_task_urls(as_user, task, mallory, name, method):
    client = as_user(mallory)

    response = getattr(client, method)(
        reverse(name, args=[task.pk]), {"body": "hi", "status": "done", "before": 1}
    )

    assert response.status_code == 404
    assert not task.messages.exists()


def test_an_unknown_task_is_404(as_user, alice):
    assert as_user(alice).get(reverse("tasks:detail", args=[9999])).status_code == 404


def test_an_editor_posts_a_message(as_user, task, bob):
    response = as_user(bob).post(
        reverse("tasks:post_message", args=[task.pk]), {"body": "Hello **team**"}
    )

    assert response.status_code == 302
    message = task.messages.get()
    assert (message.author_name, message.body, message.kind) == ("bob", "Hello **team**", "human")


def test_an_htmx_post_answers_with_a_fresh_form(as_user, task, bob):
    response = as_user(bob).post(
        reverse("tasks:post_message", args=[task.pk]), {"body": "Hi"}, HTTP_HX_REQUEST="true"
    )

    assert response.status_code == 200
    assert b'id="chat-form"' in response.content
    assert task.messages.count() == 1


def test_viewers_read_the_chat_but_cannot_post(as_user, task, carol):
    client = as_user(carol)

    page = client.get(reverse("tasks:detail", args=[task.pk]))
    response = client.post(reverse("tasks:post_message", args=[task.pk]), {"body": "Hi"})

    assert b"viewers cannot post" in page.content
    assert response.status_code == 403
    assert not task.messages.exists()


def test_a_message_over_20000_characters_is_refused_with_a_clear_reason(as_user, task, bob):
    response = as_user(bob).post(
        reverse("tasks:post_message", args=[task.pk]),
        {"body": "x" * 20_001},
        HTTP_HX_REQUEST="true",
    )

    assert response.status_code == 400
    assert b"limited to 20000 characters" in response.content
    assert not task.messages.exists()


def test_an_empty_message_is_refused_with_400(as_user, task, bob):
    response = as_user(bob).post(reverse("tasks:post_message", args=[task.pk]), {"body": "   "})

    assert response.status_code == 400
    assert not task.messages.exists()


def test_script_and_html_in_messages_are_inert(as_user, task, workspace, bob):
    post_message(
        membership=membership_of(workspace, bob),
        task=task,
        body='<script>alert("x")</script> <img src=x onerror=alert(1)> [a](javascript:alert(1))',
    )

    page = as_user(bob).get(reverse("tasks:detail", args=[task.pk])).content

    assert b"<script>alert" not in page
    assert b"<img src=x onerror" not in page
    assert b'href="javascript:' not in page
    assert b"&lt;script&gt;" in page


def test_markdown_in_messages_renders(as_user, task, workspace, bob):
    post_message(membership=membership_of(workspace, bob), task=task, body="**bold** and `code`")

    page = as_user(bob).get(reverse("tasks:detail", args=[task.pk])).content

    assert b"<strong>bold</strong>" in page
    assert b"<code>code</code>" in page


def test_chat_history_is_paginated(as_user, task, workspace, bob, settings):
    settings.CHAT_PAGE_SIZE = 5
    bob_membership = membership_of(workspace, bob)
    for number in range(12):
        post_message(membership=bob_membership, task=task, body=f"message {number:02d}")
    client = as_user(bob)

    page = client.get(reverse("tasks:detail", args=[task.pk])).content.decode()
    oldest_shown = Message.objects.filter(body="message 07").get().pk
    older = client.get(
        reverse("tasks:older_messages", args=[task.pk]), {"before": oldest_shown}
    ).content.decode()

    assert "message 11" in page
    assert "message 07" in page
    assert "message 06" not in page
    assert "Load older messages" in page
    assert [f"message {n:02d}" in older for n in range(2, 7)] == [True] * 5
    assert "message 07" not in older


def test_older_messages_needs_a_message_id(as_user, task, bob):
    response = as_user(bob).get(reverse("tasks:older_messages", args=[task.pk]), {"before": "x"})

    assert response.status_code == 400


def test_editors_set_the_task_status(as_user, task, bob):
    response = as_user(bob).post(reverse("tasks:status", args=[task.pk]), {"status": "needs_input"})

    task.refresh_from_db()
    assert response.status_code == 302
    assert task.status == TaskStatus.NEEDS_INPUT


def test_viewers_cannot_set_the_task_status(as_user, task, carol):
    response = as_user(carol).post(reverse("tasks:status", args=[task.pk]), {"status": "done"})

    task.refresh_from_db()
    assert response.status_code == 403
    assert task.status == TaskStatus.OPEN


def test_an_unknown_status_is_refused_with_400(as_user, task, bob):
    response = as_user(bob).post(reverse("tasks:status", args=[task.pk]), {"status": "lost"})

    task.refresh_from_db()
    assert response.status_code == 400
    assert task.status == TaskStatus.OPEN


@pytest.mark.parametrize("user", ["alice", "bob", "carol"])
def test_the_workspace_pages_link_to_its_agents_for_every_member(as_user, workspace, user, request):
    client = as_user(request.getfixturevalue(user))
    agents_url = reverse("agents:manage", args=[workspace.pk])

    tasks = client.get(reverse("tasks:list", args=[workspace.pk]))

    assert f'href="{agents_url}">Agents</a>'.encode() in tasks.content
    assert client.get(agents_url).status_code == 200
