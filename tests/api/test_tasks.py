from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

from collab.tasks.models import Document, Message, Task
from collab.tasks.services import post_message
from collab.workspaces.models import Workspace
from tests import factories
from tests.api.conftest import ApiClientFactory

pytestmark = pytest.mark.django_db

READERS = [("alice", "owner", True), ("bob", "editor", True), ("carol", "viewer", False)]


def say(task: Task, user: User, *bodies: str) -> list[Message]:
    membership = factories.membership_of(task.workspace, user)
    return [post_message(membership=membership, task=task, body=body).message for body in bodies]


def test_members_get_the_task_with_its_document_and_their_role(
    request: pytest.FixtureRequest, task: Task, api_as: ApiClientFactory
) -> None:
    Document.objects.filter(task=task).update(text="# Agenda\n\n- venue 🏔️")
    for name, role, can_edit in READERS:
        response = api_as(request.getfixturevalue(name)).get(f"/api/tasks/{task.pk}")
        assert response.status_code == 200
        body = response.json()
        assert body["id"] == task.pk
        assert body["workspace_id"] == task.workspace_id
        assert body["title"] == "Plan the offsite"
        assert body["status"] == "open"
        assert body["document"]["text"] == "# Agenda\n\n- venue 🏔️"
        assert (body["role"], body["can_edit"]) == (role, can_edit)


def test_outsider_gets_404_for_a_task(mallory: User, task: Task, api_as: ApiClientFactory) -> None:
    client = api_as(mallory)
    assert client.get(f"/api/tasks/{task.pk}").status_code == 404
    assert client.get(f"/api/tasks/{task.pk}/messages").status_code == 404


def test_unknown_task_answers_404(alice: User, api_as: ApiClientFactory) -> None:
    assert api_as(alice).get("/api/tasks/999999").status_code == 404
    assert api_as(alice).get("/api/tasks/999999/messages").status_code == 404


def test_members_read_the_chat_oldest_first(
    request: pytest.FixtureRequest, alice: User, bob: User, task: Task, api_as: ApiClientFactory
) -> None:
    first, second = say(task, alice, "Hello **team**")[0], say(task, bob, "Hi")[0]
    for name, _, _ in READERS:
        response = api_as(request.getfixturevalue(name)).get(f"/api/tasks/{task.pk}/messages")
        assert response.status_code == 200
        body = response.json()
        assert [m["id"] for m in body["messages"]] == [first.pk, second.pk]
        assert body["messages"][0] | {"created_at": None} == {
            "id": first.pk,
            "task_id": task.pk,
            "kind": "human",
            "author": "alice",
            "body": "Hello **team**",
            "created_at": None,
        }
        assert (body["has_more"], body["next_before"]) == (False, None)


def test_chat_pages_walk_back_with_before(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    messages = say(task, alice, *[f"message {n}" for n in range(5)])
    client = api_as(alice)
    url = f"/api/tasks/{task.pk}/messages"

    page = client.get(url, {"limit": 2}).json()
    assert [m["body"] for m in page["messages"]] == ["message 3", "message 4"]
    assert (page["has_more"], page["next_before"]) == (True, messages[3].pk)

    page = client.get(url, {"limit": 2, "before": page["next_before"]}).json()
    assert [m["body"] for m in page["messages"]] == ["message 1", "message 2"]
    assert page["has_more"] is True

    page = client.get(url, {"limit": 2, "before": page["next_before"]}).json()
    assert [m["body"] for m in page["messages"]] == ["message 0"]
    assert (page["has_more"], page["next_before"]) == (False, None)


def test_chat_page_of_exactly_limit_messages_has_no_more(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    say(task, alice, "one", "two")
    page = api_as(alice).get(f"/api/tasks/{task.pk}/messages", {"limit": 2}).json()
    assert len(page["messages"]) == 2
    assert page["has_more"] is False


@override_settings(CHAT_PAGE_SIZE=3)
def test_chat_page_size_defaults_to_the_setting(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    say(task, alice, *[f"m{n}" for n in range(5)])
    page = api_as(alice).get(f"/api/tasks/{task.pk}/messages").json()
    assert [m["body"] for m in page["messages"]] == ["m2", "m3", "m4"]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ({"limit": 201}, "limit"),
        ({"limit": 0}, "limit"),
        ({"limit": "ten"}, "limit"),
        ({"before": "abc"}, "before"),
        ({"before": -1}, "before"),
    ],
)
def test_bad_chat_page_parameters_answer_400(
    alice: User, task: Task, api_as: ApiClientFactory, query: dict[str, Any], field: str
) -> None:
    response = api_as(alice).get(f"/api/tasks/{task.pk}/messages", query)
    assert response.status_code == 400
    assert list(response.json()["errors"]) == [field]


def test_chat_page_of_200_is_allowed(alice: User, task: Task, api_as: ApiClientFactory) -> None:
    response = api_as(alice).get(f"/api/tasks/{task.pk}/messages", {"limit": 200})
    assert response.status_code == 200


def test_chat_query_count_does_not_grow_with_messages(
    alice: User, task: Task, api_as: ApiClientFactory, django_assert_num_queries: Any
) -> None:
    say(task, alice, *[f"m{n}" for n in range(10)])
    client = api_as(alice)
    client.get("/api/workspaces")  # first use records last_used_at
    # token (with the address's lockout count), task, membership, messages
    with django_assert_num_queries(4):
        assert len(client.get(f"/api/tasks/{task.pk}/messages").json()["messages"]) == 10


@pytest.mark.parametrize("name", ["alice", "bob"])
def test_owners_and_editors_post_messages(
    request: pytest.FixtureRequest,
    name: str,
    task: Task,
    api_as: ApiClientFactory,
    django_capture_on_commit_callbacks: Any,
) -> None:
    with django_capture_on_commit_callbacks() as callbacks:
        response = api_as(request.getfixturevalue(name)).post(
            f"/api/tasks/{task.pk}/messages", {"body": " Hello "}, content_type="application/json"
        )
    assert response.status_code == 201
    message = Message.objects.get(task=task)
    assert response.json() | {"created_at": None} == {
        "id": message.pk,
        "task_id": task.pk,
        "kind": "human",
        "author": name,
        "body": "Hello",
        "created_at": None,
        "memory_notice": "",
    }
    assert message.author == request.getfixturevalue(name)
    assert callbacks, "the service broadcasts the new message on commit"


def test_a_memory_command_posted_through_the_api_says_what_it_did(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    response = api_as(alice).post(
        f"/api/tasks/{task.pk}/messages",
        {"body": "remember that I prefer bullet points"},
        content_type="application/json",
    )

    assert response.status_code == 201
    assert response.json()["memory_notice"] == (
        "Remembered for you, everywhere: “I prefer bullet points”."
    )


def test_viewer_cannot_post_a_message(carol: User, task: Task, api_as: ApiClientFactory) -> None:
    response = api_as(carol).post(
        f"/api/tasks/{task.pk}/messages", {"body": "Let me in"}, content_type="application/json"
    )
    assert response.status_code == 403
    assert not task.messages.exists()


def test_outsider_cannot_post_a_message(
    mallory: User, task: Task, api_as: ApiClientFactory
) -> None:
    response = api_as(mallory).post(
        f"/api/tasks/{task.pk}/messages", {"body": "Hi"}, content_type="application/json"
    )
    assert response.status_code == 404
    assert not task.messages.exists()


def test_message_over_20000_characters_is_refused_with_a_clear_message(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    response = api_as(alice).post(
        f"/api/tasks/{task.pk}/messages", {"body": "x" * 20_001}, content_type="application/json"
    )
    assert response.status_code == 400
    assert response.json()["errors"] == {
        "body": ["Messages are limited to 20,000 characters; this one has 20,001."]
    }
    assert "20,000" in response.json()["detail"]
    assert not task.messages.exists()


def test_message_of_exactly_20000_characters_is_accepted(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    response = api_as(alice).post(
        f"/api/tasks/{task.pk}/messages", {"body": "x" * 20_000}, content_type="application/json"
    )
    assert response.status_code == 201


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        ({}, "Field required"),
        ({"body": "   "}, "Write something first."),
        ({"body": ["a"]}, "valid string"),
        ({"body": "hi", "author": "bob"}, "Extra inputs are not permitted"),
    ],
)
def test_invalid_message_payload_answers_400_with_field_errors(
    alice: User, task: Task, api_as: ApiClientFactory, payload: dict[str, Any], reason: str
) -> None:
    response = api_as(alice).post(
        f"/api/tasks/{task.pk}/messages", payload, content_type="application/json"
    )
    assert response.status_code == 400
    [(field, [message])] = response.json()["errors"].items()
    assert field in ("body", "author")
    assert reason in message
    assert not task.messages.exists()


def test_oversized_request_body_answers_413(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    with override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000):
        response = api_as(alice).post(
            f"/api/tasks/{task.pk}/messages", {"body": "x" * 2000}, content_type="application/json"
        )
    assert response.status_code == 413
    assert not task.messages.exists()


def test_workspace_of_a_task_is_checked_not_just_the_task_id(
    alice: User, mallory: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    # mallory owns another workspace; her membership there must not open alice's task
    factories.make_workspace(mallory, name="Mallory's")
    task = factories.make_task(workspace)
    response = api_as(mallory).post(
        f"/api/tasks/{task.pk}/messages", {"body": "Hi"}, content_type="application/json"
    )
    assert response.status_code == 404


def test_task_detail_does_not_load_the_yjs_snapshot(
    alice: User, task: Task, api_as: ApiClientFactory
) -> None:
    client = api_as(alice)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(f"/api/tasks/{task.pk}").status_code == 200
    document_reads = [q["sql"] for q in queries.captured_queries if "tasks_document" in q["sql"]]
    assert len(document_reads) == 1
    assert "ystate" not in document_reads[0]
