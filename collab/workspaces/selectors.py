"""Reads of workspaces that check membership. Outsiders get ``Http404``, never a hint."""

from __future__ import annotations

from django.contrib.auth.models import AnonymousUser, User
from django.db.models import QuerySet
from django.http import Http404

from collab.workspaces.models import Invitation, Membership, Role, Workspace

AnyUser = User | AnonymousUser


def list_workspaces_for_user(user: AnyUser) -> QuerySet[Workspace]:
    if not user.is_authenticated:
        return Workspace.objects.none()
    return Workspace.objects.filter(memberships__user=user).order_by("name", "id")


def get_membership(user: AnyUser, workspace_id: int) -> Membership:
    """The user's membership of the workspace, or ``Http404`` for anyone else."""
    if not user.is_authenticated:
        raise Http404("No such workspace.")
    try:
        return Membership.objects.select_related("workspace").get(
            workspace_id=workspace_id, user=user
        )
    except Membership.DoesNotExist:
        raise Http404("No such workspace.") from None


def get_workspace_for_user(user: AnyUser, workspace_id: int) -> Workspace:
    return get_membership(user, workspace_id).workspace


def list_members(workspace: Workspace) -> QuerySet[Membership]:
    return workspace.memberships.select_related("user").order_by("joined_at", "id")


def list_invitations(workspace: Workspace) -> QuerySet[Invitation]:
    return workspace.invitations.select_related("created_by").order_by("-created_at")


def count_owners(workspace: Workspace) -> int:
    return workspace.memberships.filter(role=Role.OWNER).count()


def get_member(workspace: Workspace, member_id: int) -> Membership:
    """A membership of this workspace by its id, or ``Http404``."""
    member = list_members(workspace).filter(pk=member_id).first()
    if member is None:
        raise Http404("No such member.")
    return member


def get_invitation(workspace: Workspace, invitation_id: int) -> Invitation:
    """An invitation of this workspace by its id, or ``Http404``."""
    invitation = list_invitations(workspace).filter(pk=invitation_id).first()
    if invitation is None:
        raise Http404("No such invitation.")
    return invitation
