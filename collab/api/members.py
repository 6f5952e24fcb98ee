"""/api/workspaces/{id}/members and /invitations: owners see and manage who belongs, through
the services of the members page (the last owner stays, every change is in the audit log)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from django.urls import reverse
from ninja import Field, Router, Schema, Status

from collab.api.auth import current_user
from collab.api.schemas import (
    BadRequest,
    Error,
    InvitationAcceptIn,
    PathId,
    WorkspaceOut,
    body_config,
)
from collab.lib.errors import Conflict
from collab.workspaces import services
from collab.workspaces.models import Invitation, Membership, Role
from collab.workspaces.permissions import require_owner
from collab.workspaces.selectors import (
    get_invitation,
    get_member,
    get_membership,
    list_invitations,
    list_members,
)

router = Router(tags=["members"])
invitation_router = Router(tags=["members"])  # mounted under /api/invitations

OWNERS = {400: BadRequest, 401: Error, 403: Error, 404: Error}


class MemberOut(Schema):
    id: int = Field(description="The membership's id (use it to change a role or remove).")
    user_id: int
    username: str
    role: Role
    joined_at: datetime


class RoleIn(Schema):
    model_config = body_config({"role": "viewer"})

    role: Role


class InvitationOut(Schema):
    id: int
    role: Role
    state: str = Field(description="`active`, `used up`, `expired` or `revoked`.")
    uses: int
    max_uses: int
    expires_at: datetime
    created_at: datetime
    created_by: str | None


class NewInvitationOut(InvitationOut):
    link: str = Field(description="The invitation link: shown once, only its hash is stored.")


class InvitationIn(Schema):
    model_config = body_config({"role": "editor", "max_uses": 5, "days": 7})

    role: Role = Field(description="`editor` or `viewer` (an owner cannot be invited).")
    max_uses: int = Field(1, ge=1, le=1000)
    days: int | None = Field(None, ge=1, le=90, description="Valid for; default from settings.")


def _member(member: Membership) -> dict[str, Any]:
    return {
        "id": member.pk,
        "user_id": member.user_id,
        "username": member.user.get_username(),
        "role": member.role,
        "joined_at": member.joined_at,
    }


def _invitation(invitation: Invitation) -> dict[str, Any]:
    creator = invitation.created_by
    return {
        "id": invitation.pk,
        "role": invitation.role,
        "state": invitation.state,
        "uses": invitation.uses,
        "max_uses": invitation.max_uses,
        "expires_at": invitation.expires_at,
        "created_at": invitation.created_at,
        "created_by": creator.get_username() if creator is not None else None,
    }


def _owner(request: HttpRequest, workspace_id: int) -> Membership:
    membership = get_membership(current_user(request), workspace_id)
    require_owner(membership)
    return membership


@router.get(
    "/{workspace_id}/members",
    response={200: list[MemberOut], **OWNERS},
    summary="List a workspace's members (owners)",
)
def list_workspace_members(request: HttpRequest, workspace_id: PathId) -> list[dict[str, Any]]:
    owner = _owner(request, workspace_id)
    return [_member(member) for member in list_members(owner.workspace)]


@router.put(
    "/{workspace_id}/members/{member_id}/role",
    response={200: MemberOut, **OWNERS},
    summary="Change a member's role (owners; a workspace keeps at least one owner)",
)
def change_member_role(
    request: HttpRequest, workspace_id: PathId, member_id: PathId, payload: RoleIn
) -> dict[str, Any]:
    owner = _owner(request, workspace_id)
    member = get_member(owner.workspace, member_id)
    return _member(services.change_role(actor=owner, membership=member, role=payload.role))


@router.delete(
    "/{workspace_id}/members/{member_id}",
    response={204: None, **OWNERS},
    summary="Remove a member (owners; a workspace keeps at least one owner)",
)
def remove_workspace_member(
    request: HttpRequest, workspace_id: PathId, member_id: PathId
) -> Status[None]:
    owner = _owner(request, workspace_id)
    member = get_member(owner.workspace, member_id)
    services.remove_member(actor=owner, membership=member)
    return Status(204, None)


@router.post(
    "/{workspace_id}/leave",
    response={204: None, 400: BadRequest, 401: Error, 404: Error},
    summary="Leave a workspace (any member; the last owner cannot leave)",
)
def leave_workspace(request: HttpRequest, workspace_id: PathId) -> Status[None]:
    """As the members page's Leave button: your open pages and sockets of it close at once,
    and it is in the audit log. 400 when you are its last owner: make someone else an owner
    first."""
    membership = get_membership(current_user(request), workspace_id)
    services.leave_workspace(membership=membership)
    return Status(204, None)


@router.get(
    "/{workspace_id}/invitations",
    response={200: list[InvitationOut], **OWNERS},
    summary="List a workspace's invitations, newest first (owners)",
)
def list_workspace_invitations(request: HttpRequest, workspace_id: PathId) -> list[dict[str, Any]]:
    owner = _owner(request, workspace_id)
    return [_invitation(invitation) for invitation in list_invitations(owner.workspace)]


@router.post(
    "/{workspace_id}/invitations",
    response={201: NewInvitationOut, **OWNERS},
    summary="Invite people as editors or viewers: a link, shown once (owners)",
)
def invite(
    request: HttpRequest, workspace_id: PathId, payload: InvitationIn
) -> Status[dict[str, Any]]:
    owner = _owner(request, workspace_id)
    new = services.create_invitation(
        actor=owner, role=payload.role, max_uses=payload.max_uses, days=payload.days
    )
    link = request.build_absolute_uri(reverse("workspaces:invitation", args=[new.token]))
    return Status(201, {**_invitation(new.invitation), "link": link})


@router.post(
    "/{workspace_id}/invitations/{invitation_id}/revoke",
    response={200: InvitationOut, **OWNERS, 409: Error},
    summary="Revoke an invitation: its link stops working (owners)",
)
def revoke(request: HttpRequest, workspace_id: PathId, invitation_id: PathId) -> dict[str, Any]:
    """409 when it was already revoked."""
    owner = _owner(request, workspace_id)
    invitation = get_invitation(owner.workspace, invitation_id)
    if invitation.revoked_at is not None:
        raise Conflict("This invitation has already been revoked.")
    services.revoke_invitation(actor=owner, invitation=invitation)
    return _invitation(invitation)


@invitation_router.post(
    "/accept",
    response={200: WorkspaceOut, 400: BadRequest, 401: Error},
    summary="Join a workspace with an invitation link's token (the invitation page's button)",
)
def accept_invitation(request: HttpRequest, payload: InvitationAcceptIn) -> dict[str, Any]:
    """400 when the link is not valid, used up, expired or revoked. A member who accepts again
    keeps the role they have."""
    membership = services.accept_invitation(user=current_user(request), token=payload.token)
    workspace = membership.workspace
    return {
        "id": workspace.pk,
        "name": workspace.name,
        "role": membership.role,
        "created_at": workspace.created_at,
    }
