"""The page actions the API lacked for the token journey (issue 29): creating a workspace,
joining by an invitation, a task's status, asking an agent, undoing an agent's edit, and the
models an agent can be given. Each goes through the page's service, so the same rules hold."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.models import Action, ActionKind, Agent, ModelProfile, Trigger, Turn, TurnStatus
from collab.tasks.models import Task
from collab.workspaces import services as workspace_services
from collab.workspaces.models import Membership, Role, Workspace
from tests import factories
from tests.api.conftest import ApiClientFactory

pytestmark = pytest.mark.django_db


def _post(client: Client, url: str, body: object = None, method: str = "POST") -> Any:
    data = json.dumps({} if body is None else body)
    return client.generic(method, url, data=data, content_type="application/json")


def test_anyone_creates_a_workspace_and_owns_it(mallory: User, api_as: ApiClientFactory) -> None:
    response = _post(api_as(mallory), "/api/workspaces", {"name": "  Lab  "})
    assert response.status_code == 201
    assert response.json()["name"] == "Lab"
    assert response.json()["role"] == "owner"
    assert Membership.objects.get(workspace_id=response.json()["id"]).role == Role.OWNER


def test_a_blank_or_overlong_workspace_name_is_a_400(
    mallory: User, api_as: ApiClientFactory
) -> None:
    client = api_as(mallory)
    assert _post(client, "/api/workspaces", {"name": " "}).status_code == 400
    long = _post(client, "/api/workspaces", {"name": "x" * 121})
    assert long.status_code == 400
    assert "at most 120" in long.json()["errors"]["name"][0]
    assert not Workspace.objects.filter(memberships__user=mallory).exists()


def test_an_invitation_token_joins_with_its_role_and_a_bad_one_is_a_400(
    workspace: Workspace, alice: User, mallory: User, api_as: ApiClientFactory
) -> None:
    owner = factories.membership_of(workspace, alice)
    new = workspace_services.create_invitation(actor=owner, role=Role.VIEWER, max_uses=1)
    client = api_as(mallory)
    assert _post(client, "/api/invitations/accept", {"token": "nope"}).status_code == 400
    joined = _post(client, "/api/invitations/accept", {"token": new.token})
    assert joined.status_code == 200
    assert (joined.json()["id"], joined.json()["role"]) == (workspace.pk, "viewer")


def test_editors_change_a_tasks_status_viewers_get_403_outsiders_404(
    task: Task, bob: User, carol: User, mallory: User, api_as: ApiClientFactory
) -> None:
    url = f"/api/tasks/{task.pk}/status"
    assert _post(api_as(bob), url, {"status": "done"}, "PUT").json()["status"] == "done"
    assert _post(api_as(carol), url, {"status": "open"}, "PUT").status_code == 403
    assert _post(api_as(mallory), url, {"status": "open"}, "PUT").status_code == 404
    assert _post(api_as(bob), url, {"status": "finished"}, "PUT").status_code == 400
    task.refresh_from_db()
    assert task.status == "done"


def test_asking_an_agent_starts_its_turn_with_the_prompt_in_the_chat(
    workspace: Workspace, task: Task, bob: User, carol: User, api_as: ApiClientFactory
) -> None:
    mira = Agent.objects.create(workspace=workspace, name="Mira")
    url = f"/api/tasks/{task.pk}/agents/{mira.pk}/ask"
    response = _post(api_as(bob), url, {"prompt": "Draft the agenda"})
    assert response.status_code == 201
    turn = Turn.objects.get(pk=response.json()["id"])
    assert (turn.trigger, turn.requested_by) == (Trigger.ASK, bob)
    assert task.messages.get().body == "@Mira Draft the agenda"
    assert _post(api_as(carol), url).status_code == 403


def test_an_agents_edit_is_undone_once(
    workspace: Workspace, task: Task, alice: User, carol: User, api_as: ApiClientFactory
) -> None:
    eddie = Agent.objects.create(workspace=workspace, name="Eddie")
    turn = Turn.objects.create(task=task, agent=eddie, status=TurnStatus.DONE)
    task.document.text = "Intro\nBook the venue\n"
    task.document.save()
    action = Action.objects.create(
        turn=turn,
        index=0,
        kind=ActionKind.EDIT,
        payload={"find": "", "replace": "Book the venue\n"},
        status=Action.Status.APPLIED,
        result={"edited_directly": True},
    )
    url = f"/api/tasks/{task.pk}/edits/{action.pk}/undo"
    assert _post(api_as(carol), url).status_code == 403
    undone = _post(api_as(alice), url)
    assert undone.status_code == 200, undone.json()
    task.document.refresh_from_db()
    assert "Book the venue" not in task.document.text
    again = _post(api_as(alice), url)
    assert again.status_code == 400
    assert "already undid" in again.json()["detail"]


def test_models_are_listed_and_chosen_by_id(
    workspace: Workspace, alice: User, api_as: ApiClientFactory
) -> None:
    profile = ModelProfile.objects.create(name="Quick", provider="fake", model="suggest")
    client = api_as(alice)
    listed = client.get("/api/models").json()
    assert {"id": profile.pk, "name": "Quick"}.items() <= listed[-1].items()
    made = _post(
        client,
        f"/api/workspaces/{workspace.pk}/agents",
        {"name": "Sage", "model_profile_id": profile.pk},
    )
    assert made.status_code == 201
    assert made.json()["model_profile_id"] == profile.pk
    wrong = _post(
        client,
        f"/api/workspaces/{workspace.pk}/agents",
        {"name": "Zed", "model_profile_id": 999999},
    )
    assert wrong.status_code == 400
    assert "model_profile_id" in wrong.json()["errors"]
