from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone

from collab.accounts.models import ApiToken
from collab.accounts.services import create_api_token, revoke_api_token
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests.api.conftest import client_with_token


def every_endpoint(workspace: Workspace, task: Task) -> list[tuple[str, str, dict[str, str]]]:
    return [
        ("get", "/api/workspaces", {}),
        ("get", f"/api/workspaces/{workspace.pk}/tasks", {}),
        ("post", f"/api/workspaces/{workspace.pk}/tasks", {"title": "New"}),
        ("get", f"/api/tasks/{task.pk}", {}),
        ("get", f"/api/tasks/{task.pk}/messages", {}),
        ("post", f"/api/tasks/{task.pk}/messages", {"body": "hi"}),
    ]


def call(client: Client, method: str, url: str, payload: dict[str, str]):
    if method == "post":
        return client.post(url, payload, content_type="application/json")
    return client.get(url)


def test_anonymous_requests_answer_401_on_every_endpoint(workspace: Workspace, task: Task) -> None:
    for method, url, payload in every_endpoint(workspace, task):
        response = call(Client(), method, url, payload)
        assert response.status_code == 401, url
        assert response.json()["detail"].startswith("Authentication required")
        assert response["WWW-Authenticate"].startswith("Bearer")


def test_anonymous_writes_answer_401_even_where_csrf_is_checked(workspace: Workspace, task: Task):
    # a real browser's request without a session: CSRF checks on, no cookie, no token
    for method, url, payload in every_endpoint(workspace, task):
        response = call(Client(enforce_csrf_checks=True), method, url, payload)
        assert response.status_code == 401, url
        assert response["WWW-Authenticate"].startswith("Bearer")


def test_revoked_token_answers_401_on_every_endpoint(
    alice: User, workspace: Workspace, task: Task
) -> None:
    new = create_api_token(user=alice, name="old laptop")
    revoke_api_token(user=alice, token_id=new.api_token.pk)
    client = client_with_token(new.token)
    for method, url, payload in every_endpoint(workspace, task):
        assert call(client, method, url, payload).status_code == 401, url
    assert task.messages.count() == 0


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer collab_not-a-real-token",
        "Bearer ",
        "Bearer",
        "Basic YWxpY2U6cGFzc3dvcmQ=",
        "collab_just-the-token",
        "Bearer " + "collab_" + "x" * 500,
    ],
)
def test_unknown_or_malformed_tokens_answer_401(alice: User, authorization: str) -> None:
    create_api_token(user=alice, name="real")
    response = Client(headers={"Authorization": authorization}).get("/api/workspaces")
    assert response.status_code == 401


def test_token_of_a_deactivated_user_answers_401(alice: User) -> None:
    token = create_api_token(user=alice, name="script").token
    alice.is_active = False
    alice.save()
    assert client_with_token(token).get("/api/workspaces").status_code == 401


def test_bad_token_is_refused_even_beside_a_valid_session(alice: User) -> None:
    client = Client(headers={"Authorization": "Bearer collab_wrong"})
    client.force_login(alice)
    assert client.get("/api/workspaces").status_code == 401


def test_browser_session_can_read_the_api(alice: User, workspace: Workspace) -> None:
    client = Client()
    client.force_login(alice)
    response = client.get("/api/workspaces")
    assert response.status_code == 200
    assert [w["name"] for w in response.json()] == ["Acme"]


def test_browser_session_write_without_csrf_token_is_refused(
    alice: User, workspace: Workspace
) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    response = client.post(
        f"/api/workspaces/{workspace.pk}/tasks",
        {"title": "Sneaky"},
        content_type="application/json",
    )
    assert response.status_code == 403
    assert not workspace.tasks.filter(title="Sneaky").exists()


def test_browser_session_write_with_csrf_token_is_accepted(
    alice: User, workspace: Workspace
) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)
    client.get("/accounts/settings/")  # sets the CSRF cookie
    csrf = client.cookies["csrftoken"].value
    response = client.post(
        f"/api/workspaces/{workspace.pk}/tasks",
        {"title": "From the docs page"},
        content_type="application/json",
        headers={"X-CSRFToken": csrf},
    )
    assert response.status_code == 201


def test_token_writes_need_no_csrf_token(alice: User, workspace: Workspace) -> None:
    token = create_api_token(user=alice, name="script").token
    client = client_with_token(token, enforce_csrf_checks=True)
    response = client.post(
        f"/api/workspaces/{workspace.pk}/tasks",
        {"title": "Scripted"},
        content_type="application/json",
    )
    assert response.status_code == 201


def test_first_use_of_a_token_records_last_used_at(alice: User) -> None:
    new = create_api_token(user=alice, name="script")
    assert new.api_token.last_used_at is None
    client_with_token(new.token).get("/api/workspaces")
    new.api_token.refresh_from_db()
    assert new.api_token.last_used_at is not None


def test_last_used_at_is_not_rewritten_on_every_request(
    alice: User, django_assert_num_queries
) -> None:
    new = create_api_token(user=alice, name="script")
    recently = timezone.now() - timedelta(seconds=30)
    ApiToken.objects.filter(pk=new.api_token.pk).update(last_used_at=recently)
    client = client_with_token(new.token)
    # the token lookup (which carries the address's lockout count) + the workspace list; no
    # separate lockout query, no UPDATE of the token
    with django_assert_num_queries(2):
        assert client.get("/api/workspaces").status_code == 200
    new.api_token.refresh_from_db()
    assert new.api_token.last_used_at == recently


def test_last_used_at_is_refreshed_once_it_is_older_than_a_minute(alice: User) -> None:
    new = create_api_token(user=alice, name="script")
    long_ago = timezone.now() - timedelta(minutes=5)
    ApiToken.objects.filter(pk=new.api_token.pk).update(last_used_at=long_ago)
    client_with_token(new.token).get("/api/workspaces")
    new.api_token.refresh_from_db()
    assert new.api_token.last_used_at is not None
    assert new.api_token.last_used_at > long_ago
