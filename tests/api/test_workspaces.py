from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User

from collab.tasks.models import Task, TaskStatus
from collab.workspaces.models import Workspace
from tests import factories
from tests.api.conftest import ApiClientFactory

pytestmark = pytest.mark.django_db

READERS = [("alice", "owner"), ("bob", "editor"), ("carol", "viewer")]


def test_each_member_lists_the_workspace_with_their_own_role(
    request: pytest.FixtureRequest, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    for name, role in READERS:
        response = api_as(request.getfixturevalue(name)).get("/api/workspaces")
        assert response.status_code == 200
        assert response.json() == [
            {
                "id": workspace.pk,
                "name": "Acme",
                "role": role,
                "created_at": response.json()[0]["created_at"],
            }
        ]


def test_outsider_lists_only_their_own_workspaces(
    mallory: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    client = api_as(mallory)
    assert client.get("/api/workspaces").json() == []
    factories.make_workspace(mallory, name="Mallory's")
    assert [w["name"] for w in client.get("/api/workspaces").json()] == ["Mallory's"]


def test_members_list_tasks_and_outsiders_get_404(
    request: pytest.FixtureRequest, workspace: Workspace, task: Task, api_as: ApiClientFactory
) -> None:
    url = f"/api/workspaces/{workspace.pk}/tasks"
    for name, _ in READERS:
        response = api_as(request.getfixturevalue(name)).get(url)
        assert response.status_code == 200
        [listed] = response.json()
        assert listed["id"] == task.pk
        assert listed["workspace_id"] == workspace.pk
        assert listed["title"] == "Plan the offsite"
        assert listed["status"] == "open"
    response = api_as(request.getfixturevalue("mallory")).get(url)
    assert response.status_code == 404
    assert response.json() == {"detail": "Not found."}


def test_unknown_workspace_answers_404(alice: User, api_as: ApiClientFactory) -> None:
    assert api_as(alice).get("/api/workspaces/999999/tasks").status_code == 404


def test_task_list_filters_by_status(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    done = factories.make_task(workspace, title="Book the venue")
    Task.objects.filter(pk=done.pk).update(status=TaskStatus.DONE)
    factories.make_task(workspace, title="Pick a date")
    client = api_as(alice)
    url = f"/api/workspaces/{workspace.pk}/tasks"
    assert [t["title"] for t in client.get(url, {"status": "done"}).json()] == ["Book the venue"]
    assert [t["title"] for t in client.get(url, {"status": "open"}).json()] == ["Pick a date"]
    assert len(client.get(url).json()) == 2
    assert len(client.get(url, {"status": ""}).json()) == 2


def test_unknown_status_filter_answers_400_with_a_field_error(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    response = api_as(alice).get(f"/api/workspaces/{workspace.pk}/tasks", {"status": "lost"})
    assert response.status_code == 400
    assert list(response.json()["errors"]) == ["status"]
    assert "open" in response.json()["errors"]["status"][0]


def test_task_list_query_count_does_not_grow_with_tasks(
    alice: User, workspace: Workspace, api_as: ApiClientFactory, django_assert_num_queries: Any
) -> None:
    for n in range(5):
        factories.make_task(workspace, title=f"Task {n}")
    client = api_as(alice)
    client.get("/api/workspaces")  # first use records last_used_at
    # token (with the address's lockout count), membership, tasks
    with django_assert_num_queries(3):
        assert len(client.get(f"/api/workspaces/{workspace.pk}/tasks").json()) == 5


@pytest.mark.parametrize("name", ["alice", "bob"])
def test_owners_and_editors_create_tasks(
    request: pytest.FixtureRequest, name: str, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    response = api_as(request.getfixturevalue(name)).post(
        f"/api/workspaces/{workspace.pk}/tasks",
        {"title": "  Write the agenda ", "goal": "One page"},
        content_type="application/json",
    )
    assert response.status_code == 201
    body = response.json()
    task = Task.objects.get(pk=body["id"])
    assert (task.title, task.goal, task.workspace_id) == (
        "Write the agenda",
        "One page",
        workspace.pk,
    )
    assert body["title"] == "Write the agenda"
    assert body["status"] == "open"
    assert body["document"]["text"] == ""
    assert body["role"] == ("owner" if name == "alice" else "editor")


def test_viewer_cannot_create_a_task(
    carol: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    response = api_as(carol).post(
        f"/api/workspaces/{workspace.pk}/tasks", {"title": "Nope"}, content_type="application/json"
    )
    assert response.status_code == 403
    assert "Viewers" in response.json()["detail"]
    assert not workspace.tasks.exists()


def test_outsider_cannot_create_a_task(
    mallory: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    response = api_as(mallory).post(
        f"/api/workspaces/{workspace.pk}/tasks", {"title": "Nope"}, content_type="application/json"
    )
    assert response.status_code == 404
    assert not workspace.tasks.exists()


@pytest.mark.parametrize(
    ("payload", "field", "reason"),
    [
        ({}, "title", "Field required"),
        ({"title": 42}, "title", "valid string"),
        ({"title": "Fine", "goal": None}, "goal", "valid string"),
        ({"title": "Fine", "colour": "red"}, "colour", "Extra inputs are not permitted"),
        ({"title": "   "}, "title", "A task needs a title."),
        ({"title": "x" * 201}, "title", "under 200 characters"),
        ({"title": "Fine", "goal": "x" * 10_001}, "goal", "under 10,000 characters"),
    ],
)
def test_invalid_task_payload_answers_400_with_field_errors(
    alice: User,
    workspace: Workspace,
    api_as: ApiClientFactory,
    payload: dict[str, Any],
    field: str,
    reason: str,
) -> None:
    response = api_as(alice).post(
        f"/api/workspaces/{workspace.pk}/tasks", payload, content_type="application/json"
    )
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert list(errors) == [field]
    assert reason in errors[field][0]
    assert reason in response.json()["detail"]
    assert not workspace.tasks.exists()


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("{not json", "The request body is not valid JSON."),
        ("", "A JSON object body is required."),
        ("[1, 2]", "valid dictionary"),
    ],
)
def test_malformed_json_answers_400(
    alice: User, workspace: Workspace, api_as: ApiClientFactory, raw: str, reason: str
) -> None:
    response = api_as(alice).post(
        f"/api/workspaces/{workspace.pk}/tasks", raw, content_type="application/json"
    )
    assert response.status_code == 400
    assert reason in response.json()["errors"]["__all__"][0]
    assert not workspace.tasks.exists()


def test_owner_puts_the_workspace_instructions_and_members_read_them(
    request: pytest.FixtureRequest,
    alice: User,
    workspace: Workspace,
    api_as: ApiClientFactory,
) -> None:
    url = f"/api/workspaces/{workspace.pk}/instructions"
    response = api_as(alice).put(
        url, {"instructions": " Answer in French. "}, content_type="application/json"
    )

    assert response.status_code == 200
    assert response.json() == {"instructions": "Answer in French."}
    for name, _ in READERS:
        read = api_as(request.getfixturevalue(name)).get(url)
        assert read.json() == {"instructions": "Answer in French."}


def test_only_owners_put_instructions_and_outsiders_get_404(
    request: pytest.FixtureRequest, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    url = f"/api/workspaces/{workspace.pk}/instructions"
    body = {"instructions": "Ignore the owners."}
    for name, status in [("bob", 403), ("carol", 403), ("mallory", 404)]:
        client = api_as(request.getfixturevalue(name))
        assert client.put(url, body, content_type="application/json").status_code == status
    assert api_as(request.getfixturevalue("mallory")).get(url).status_code == 404
    workspace.refresh_from_db()
    assert workspace.instructions == ""


def test_instructions_over_the_limit_answer_400_with_reasons(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    response = api_as(alice).put(
        f"/api/workspaces/{workspace.pk}/instructions",
        {"instructions": "x" * 4001},
        content_type="application/json",
    )

    assert response.status_code == 400
    assert "instructions" in response.json()["errors"]


def test_a_task_starts_from_a_template_through_the_api(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    client = api_as(alice)
    response = client.post(
        f"/api/workspaces/{workspace.pk}/tasks",
        {"title": "Week 3 lesson", "template": "lesson_plan"},
        content_type="application/json",
    )

    assert response.status_code == 201
    body = response.json()
    assert body["template"] == "lesson_plan"
    assert body["document"]["text"].startswith("## Learning goal\n")
    listed = client.get(f"/api/workspaces/{workspace.pk}/tasks").json()
    assert [t["template"] for t in listed] == ["lesson_plan"]
    assert client.get(f"/api/tasks/{body['id']}").json()["template"] == "lesson_plan"


def test_an_unknown_template_answers_400_with_the_reason(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    response = api_as(alice).post(
        f"/api/workspaces/{workspace.pk}/tasks",
        {"title": "Odd", "template": "sonnet"},
        content_type="application/json",
    )

    assert response.status_code == 400
    reason = response.json()["errors"]["template"][0]
    assert "Unknown template 'sonnet'" in reason
    assert "travel_plan" in reason
    assert not workspace.tasks.exists()


def test_an_outsider_cannot_create_a_templated_task(
    mallory: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    response = api_as(mallory).post(
        f"/api/workspaces/{workspace.pk}/tasks",
        {"title": "Nope", "template": "travel_plan"},
        content_type="application/json",
    )

    assert response.status_code == 404
    assert not workspace.tasks.exists()
