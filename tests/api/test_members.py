"""/api/workspaces/{id}/members and /invitations: owners only."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from collab.audit.models import AuditEvent
from collab.workspaces.models import Invitation, Membership, Role, Workspace
from collab.workspaces.services import find_invitation
from tests import factories
from tests.api.conftest import ApiClientFactory
from tests.api.conftest import send_json as _send

pytestmark = pytest.mark.django_db


def _member(workspace: Workspace, user: User) -> Membership:
    return factories.membership_of(workspace, user)


def test_an_owner_lists_the_members_with_their_roles(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    response = api_as(alice).get(f"/api/workspaces/{workspace.pk}/members")
    assert response.status_code == 200
    assert [(m["username"], m["role"]) for m in response.json()] == [
        ("alice", "owner"),
        ("bob", "editor"),
        ("carol", "viewer"),
    ]


def test_editors_and_viewers_get_403_and_outsiders_404(
    bob: User, carol: User, mallory: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    base = f"/api/workspaces/{workspace.pk}"
    target = _member(workspace, carol).pk
    for user in (bob, carol):
        client = api_as(user)
        assert client.get(f"{base}/members").status_code == 403
        assert client.get(f"{base}/invitations").status_code == 403
        assert _send(client, "POST", f"{base}/invitations", {"role": "editor"}).status_code == 403
        assert (
            _send(client, "PUT", f"{base}/members/{target}/role", {"role": "editor"}).status_code
            == 403
        )
    assert api_as(mallory).get(f"{base}/members").status_code == 404
    assert _send(api_as(mallory), "DELETE", f"{base}/members/{target}").status_code == 404
    assert _member(workspace, carol).role == Role.VIEWER


def test_an_owner_changes_a_role_and_removes_a_member(
    alice: User, bob: User, carol: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    base = f"/api/workspaces/{workspace.pk}/members"
    carol_id, bob_id = _member(workspace, carol).pk, _member(workspace, bob).pk

    promoted = _send(api_as(alice), "PUT", f"{base}/{carol_id}/role", {"role": "editor"})
    removed = _send(api_as(alice), "DELETE", f"{base}/{bob_id}")

    assert promoted.status_code == 200
    assert promoted.json()["role"] == "editor"
    assert removed.status_code == 204
    assert not Membership.objects.filter(pk=bob_id).exists()


def test_the_last_owner_cannot_be_demoted_or_removed_and_bad_roles_answer_400(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    base = f"/api/workspaces/{workspace.pk}/members"
    own = _member(workspace, alice).pk

    demoted = _send(api_as(alice), "PUT", f"{base}/{own}/role", {"role": "viewer"})
    removed = _send(api_as(alice), "DELETE", f"{base}/{own}")
    unknown = _send(api_as(alice), "PUT", f"{base}/{own}/role", {"role": "boss"})

    assert demoted.status_code == 400
    assert "role" in demoted.json()["errors"]
    assert removed.status_code == 400
    assert unknown.status_code == 400
    assert _member(workspace, alice).role == Role.OWNER


def test_a_member_of_another_workspace_answers_404(
    alice: User, mallory: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    elsewhere = factories.make_workspace(mallory)
    theirs = _member(elsewhere, mallory).pk
    url = f"/api/workspaces/{workspace.pk}/members/{theirs}/role"
    assert _send(api_as(alice), "PUT", url, {"role": "viewer"}).status_code == 404


def test_an_owner_invites_with_a_working_link_and_revokes_it(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    base = f"/api/workspaces/{workspace.pk}/invitations"

    created = _send(api_as(alice), "POST", base, {"role": "viewer", "max_uses": 3, "days": 7})
    body = created.json()
    token = body["link"].rstrip("/").rsplit("/", 1)[-1]
    listed = api_as(alice).get(base).json()
    revoked = _send(api_as(alice), "POST", f"{base}/{body['id']}/revoke")
    again = _send(api_as(alice), "POST", f"{base}/{body['id']}/revoke")

    assert created.status_code == 201
    assert (body["role"], body["max_uses"], body["state"]) == ("viewer", 3, "active")
    invitation = find_invitation(token)
    assert invitation is not None
    assert invitation.pk == body["id"]
    assert [i["id"] for i in listed] == [body["id"]]
    assert "link" not in listed[0]
    assert revoked.json()["state"] == "revoked"
    assert again.status_code == 409
    assert Invitation.objects.get(pk=body["id"]).is_usable is False


def test_an_owner_cannot_be_invited_and_bounds_answer_400(
    alice: User, workspace: Workspace, api_as: ApiClientFactory
) -> None:
    base = f"/api/workspaces/{workspace.pk}/invitations"
    as_owner = _send(api_as(alice), "POST", base, {"role": "owner"})
    too_many = _send(api_as(alice), "POST", base, {"role": "editor", "max_uses": 5000})
    assert as_owner.status_code == 400
    assert "role" in as_owner.json()["errors"]
    assert too_many.status_code == 400
    assert "max_uses" in too_many.json()["errors"]
    assert not Invitation.objects.filter(workspace=workspace).exists()


def test_a_member_leaves_and_the_last_owner_cannot(
    workspace: Workspace, alice: User, carol: User, mallory: User, api_as: ApiClientFactory
) -> None:
    url = f"/api/workspaces/{workspace.pk}/leave"

    assert api_as(mallory).post(url).status_code == 404
    left = api_as(carol).post(url)
    assert left.status_code == 204
    assert not Membership.objects.filter(workspace=workspace, user=carol).exists()
    assert AuditEvent.objects.filter(action=AuditEvent.Action.MEMBER_LEFT, actor=carol).exists()
    assert api_as(carol).post(url).status_code == 404  # no longer a member

    last = api_as(alice).post(url)
    assert last.status_code == 400
    assert "at least one owner" in last.json()["detail"]
    assert Membership.objects.filter(workspace=workspace, user=alice).exists()
    assert api_as(alice).post("/api/workspaces/0/leave").status_code == 400
