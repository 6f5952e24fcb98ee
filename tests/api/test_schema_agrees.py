"""The OpenAPI schema says what the API does: a malformed id is the API's JSON 400 and an
unknown path its JSON 404 (never the site's HTML page), the blank or over-long titles and
bodies the services refuse are invalid in the schema too, and the empty `status=` the task
list accepts is in the schema."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests.api.conftest import ApiClientFactory

pytestmark = pytest.mark.django_db


def openapi() -> dict[str, Any]:
    return Client().get("/api/openapi.json").json()


def body_schema(schema: dict[str, Any], path: str) -> dict[str, Any]:
    content = schema["paths"][path]["post"]["requestBody"]["content"]["application/json"]
    ref = content["schema"]["$ref"].rsplit("/", 1)[-1]
    return schema["components"]["schemas"][ref]


@pytest.mark.parametrize(
    ("method", "url", "field"),
    [
        ("get", "/api/tasks/abc", "task_id"),
        ("get", "/api/tasks/1.5/messages", "task_id"),
        ("post", "/api/tasks/x/messages", "task_id"),
        ("post", "/api/tasks/%20/feedback", "task_id"),
        ("get", "/api/workspaces/abc/tasks", "workspace_id"),
        ("put", "/api/workspaces/-1/instructions", "workspace_id"),
    ],
)
def test_a_malformed_id_answers_the_apis_json_400_naming_it(
    alice: User, api_as: ApiClientFactory, method: str, url: str, field: str
) -> None:
    response = api_as(alice).generic(method.upper(), url, "{}", content_type="application/json")

    assert response.status_code == 400
    assert response["Content-Type"] == "application/json; charset=utf-8"
    assert field in response.json()["errors"]


def test_a_path_no_operation_serves_answers_the_apis_json_404(
    alice: User, api_as: ApiClientFactory
) -> None:
    for url in ("/api/nothing", "/api/tasks/1/nothing", "/api/workspaces/1/tasks/2"):
        response = api_as(alice).get(url)

        assert response.status_code == 404
        assert response.json() == {"detail": "Not found."}


TITLES = [
    "",
    " ",
    "\x1c\u3000\t",  # only characters str.strip() removes
    "\u200bx",  # a zero-width space is no whitespace to strip()
    "Plan",
    " Plan \n",
    "x" * 200,
    "  " + "x" * 200 + "\u3000",
    "x" * 201,
    "x" + " " * 199 + "y",
    "x" + " " * 200 + "y",
]


@pytest.mark.parametrize("title", TITLES)
def test_the_schema_and_the_service_agree_on_every_title(
    alice: User, workspace: Workspace, api_as: ApiClientFactory, title: str
) -> None:
    keywords = body_schema(openapi(), "/api/workspaces/{workspace_id}/tasks")["properties"]["title"]

    response = api_as(alice).post(
        f"/api/workspaces/{workspace.pk}/tasks", {"title": title}, content_type="application/json"
    )

    valid = len(title) >= keywords["minLength"] and re.search(keywords["pattern"], title)
    assert response.status_code == (201 if valid else 400), response.content
    assert Task.objects.exists() is bool(valid)


@pytest.mark.parametrize(
    "body", ["", " \n ", "\x85", "hi", " hi ", "x" * 20_000, "\n" + "x" * 20_000, "x" * 20_001]
)
def test_the_schema_and_the_service_agree_on_every_message_body(
    alice: User, task: Task, api_as: ApiClientFactory, body: str
) -> None:
    keywords = body_schema(openapi(), "/api/tasks/{task_id}/messages")["properties"]["body"]

    response = api_as(alice).post(
        f"/api/tasks/{task.pk}/messages", {"body": body}, content_type="application/json"
    )

    valid = len(body) >= keywords["minLength"] and re.search(keywords["pattern"], body)
    assert response.status_code == (201 if valid else 400), response.content


def test_the_schema_bounds_the_goal_as_the_service_does(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    keywords = body_schema(openapi(), "/api/workspaces/{workspace_id}/tasks")["properties"]["goal"]
    url = f"/api/workspaces/{workspace.pk}/tasks"
    client = api_as(alice)

    longest = client.post(
        url, {"title": "a", "goal": "g" * keywords["maxLength"]}, "application/json"
    )
    longer = client.post(
        url, {"title": "b", "goal": "g" * (keywords["maxLength"] + 1)}, "application/json"
    )

    assert (longest.status_code, longer.status_code) == (201, 400)


def test_an_empty_status_is_in_the_schema_and_lists_every_task(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    operation = openapi()["paths"]["/api/workspaces/{workspace_id}/tasks"]["get"]
    [status] = [p for p in operation["parameters"] if p["name"] == "status"]
    choices = status["schema"].get("anyOf", [status["schema"]])
    allowed = [v for c in choices for v in c.get("enum", [c.get("const")]) if v is not None]
    Task.objects.create(workspace=workspace, title="One")

    listed = api_as(alice).get(f"/api/workspaces/{workspace.pk}/tasks", {"status": ""})

    assert "" in allowed
    assert listed.status_code == 200
    assert len(listed.json()) == 1
