"""/api/workspaces/{id}/agents, /api/tasks/{id}/agents and /api/tasks/{id}/turns."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from agents.models import Action, ActionKind, Agent, Trigger, Turn, TurnStatus
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.api.conftest import ApiClientFactory
from tests.api.conftest import send_json as _send

pytestmark = pytest.mark.django_db


@pytest.fixture
def mira(workspace: Workspace) -> Agent:
    return Agent.objects.create(workspace=workspace, name="Mira")


def test_every_member_lists_the_workspace_agents(
    request: pytest.FixtureRequest, workspace: Workspace, mira: Agent, api_as: ApiClientFactory
) -> None:
    for name in ("alice", "bob", "carol"):
        response = api_as(request.getfixturevalue(name)).get(
            f"/api/workspaces/{workspace.pk}/agents"
        )
        assert response.status_code == 200
        assert [a["name"] for a in response.json()] == ["Mira"]


def test_an_owner_creates_changes_and_disables_an_agent(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    client = api_as(alice)
    base = f"/api/workspaces/{workspace.pk}/agents"

    created = _send(client, "POST", base, {"name": "Scribe", "mode": "may_edit"})
    agent_id = created.json()["id"]
    changed = _send(client, "PATCH", f"{base}/{agent_id}", {"instructions": "Be brief."})
    disabled = _send(client, "POST", f"{base}/{agent_id}/disable")

    assert created.status_code == 201
    assert created.json()["mode"] == "may_edit"
    assert changed.status_code == 200
    assert (changed.json()["instructions"], changed.json()["mode"]) == ("Be brief.", "may_edit")
    assert disabled.json()["is_active"] is False
    assert Agent.objects.get(pk=agent_id).is_active is False


def test_editors_and_viewers_cannot_manage_agents_and_outsiders_see_nothing(
    bob: User,
    carol: User,
    mallory: User,
    workspace: Workspace,
    mira: Agent,
    api_as: ApiClientFactory,
) -> None:
    base = f"/api/workspaces/{workspace.pk}/agents"
    for user in (bob, carol):
        assert _send(api_as(user), "POST", base, {"name": "Other"}).status_code == 403
        assert _send(api_as(user), "POST", f"{base}/{mira.pk}/disable").status_code == 403
    assert api_as(mallory).get(base).status_code == 404
    assert _send(api_as(mallory), "PATCH", f"{base}/{mira.pk}", {"name": "X"}).status_code == 404
    mira.refresh_from_db()
    assert (mira.is_active, Agent.objects.filter(workspace=workspace).count()) == (True, 1)


def test_a_bad_or_clashing_agent_answers_400_with_the_field(
    alice: User, workspace: Workspace, mira: Agent, api_as: ApiClientFactory
) -> None:
    base = f"/api/workspaces/{workspace.pk}/agents"
    clash = _send(api_as(alice), "POST", base, {"name": "mira"})
    bad_name = _send(api_as(alice), "POST", base, {"name": "9 lives"})
    bad_policy = _send(api_as(alice), "PATCH", f"{base}/{mira.pk}", {"policy_name": "nope"})
    assert clash.status_code == 400
    assert "name" in clash.json()["errors"]
    assert bad_name.status_code == 400
    assert "name" in bad_name.json()["errors"]
    assert bad_policy.status_code == 400
    assert "policy_name" in bad_policy.json()["errors"]


def test_an_editor_puts_an_agent_on_a_task_and_takes_it_off(
    bob: User, carol: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    url = f"/api/tasks/{task.pk}/agents"

    viewer = _send(api_as(carol), "POST", url, {"agent_id": mira.pk})
    added = _send(api_as(bob), "POST", url, {"agent_id": mira.pk})
    listed = api_as(carol).get(url)
    removed = _send(api_as(bob), "DELETE", f"{url}/{mira.pk}")

    assert viewer.status_code == 403
    assert [a["name"] for a in added.json()] == ["Mira"]
    assert [a["id"] for a in listed.json()] == [mira.pk]
    assert removed.json() == []
    assert not mira.tasks.filter(pk=task.pk).exists()


def test_an_agent_of_another_workspace_cannot_join_a_task(
    alice: User, mallory: User, task: Task, api_as: ApiClientFactory
) -> None:
    elsewhere = Agent.objects.create(workspace=factories.make_workspace(mallory), name="Spy")
    response = _send(
        api_as(alice), "POST", f"/api/tasks/{task.pk}/agents", {"agent_id": elsewhere.pk}
    )
    assert response.status_code == 404
    assert (
        _send(api_as(mallory), "POST", f"/api/tasks/{task.pk}/agents", {"agent_id": 1}).status_code
        == 404
    )


def _turn(task: Task, agent: Agent, status: str = TurnStatus.QUEUED) -> Turn:
    return Turn.objects.create(agent=agent, task=task, trigger=Trigger.MENTION, status=status)


def test_members_list_turns_and_get_one_with_its_actions(
    carol: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    first, second = _turn(task, mira, TurnStatus.DONE), _turn(task, mira)
    Action.objects.create(
        turn=first, index=0, kind=ActionKind.REPLY, payload={"body": "Hi"}, idempotency_key="k0"
    )

    listed = api_as(carol).get(f"/api/tasks/{task.pk}/turns").json()
    detail = api_as(carol).get(f"/api/tasks/{task.pk}/turns/{first.pk}").json()

    assert [t["id"] for t in listed["turns"]] == [first.pk, second.pk]
    assert detail["status"] == "done"
    assert [(a["kind"], a["payload"]) for a in detail["actions"]] == [("reply", {"body": "Hi"})]


def test_an_editor_stops_a_turn_and_stopping_a_finished_one_conflicts(
    bob: User, carol: User, mallory: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    turn = _turn(task, mira, TurnStatus.RUNNING)
    url = f"/api/tasks/{task.pk}/turns/{turn.pk}/cancel"

    assert _send(api_as(carol), "POST", url).status_code == 403
    assert _send(api_as(mallory), "POST", url).status_code == 404
    stopped = _send(api_as(bob), "POST", url)
    again = _send(api_as(bob), "POST", url)

    assert stopped.status_code == 200
    assert stopped.json()["status"] == "cancelled"
    assert again.status_code == 409
    assert again.json() == {"detail": "This turn has already finished (cancelled)."}


def test_a_turn_of_another_task_answers_404(
    alice: User, task: Task, mira: Agent, api_as: ApiClientFactory
) -> None:
    other = factories.make_task(task.workspace, "Other")
    turn = _turn(other, mira)
    assert api_as(alice).get(f"/api/tasks/{task.pk}/turns/{turn.pk}").status_code == 404
