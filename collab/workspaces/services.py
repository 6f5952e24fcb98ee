"""Every change to workspaces, memberships and invitations goes through here."""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from collab.audit.models import AuditEvent
from collab.audit.services import record_event
from collab.core import hooks
from collab.realtime import broadcast
from collab.workspaces.models import (
    INSTRUCTIONS_MAX_CHARS,
    Invitation,
    Membership,
    Role,
    Workspace,
)

Action = AuditEvent.Action


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@transaction.atomic
def create_workspace(*, owner: User, name: str, agent_name: str = "") -> Workspace:
    """A workspace owned by ``owner``; the ``workspace_created`` hooks add what comes with one
    (e.g. its default agent, named ``agent_name`` when given)."""
    name = name.strip()
    if not name:
        raise ValidationError({"name": "A workspace needs a name."})
    longest = Workspace._meta.get_field("name").max_length or 120
    if len(name) > longest:
        raise ValidationError({"name": f"A workspace name has at most {longest} characters."})
    workspace = Workspace.objects.create(name=name)
    Membership.objects.create(workspace=workspace, user=owner, role=Role.OWNER)
    record_event(actor=owner, action=Action.WORKSPACE_CREATED, workspace=workspace, target=name)
    hooks.workspace_created(workspace=workspace, owner=owner, agent_name=agent_name.strip())
    return workspace


def _require_owner(actor: Membership) -> None:
    if not actor.is_owner:
        raise PermissionDenied("Only owners manage members.")


@transaction.atomic
def update_workspace_instructions(*, actor: Membership, instructions: str) -> Workspace:
    """Set the instructions every agent of the workspace is given (owners only)."""
    if not actor.is_owner:
        raise PermissionDenied("Only owners change the workspace instructions.")
    instructions = instructions.strip().replace("\r\n", "\n")
    if len(instructions) > INSTRUCTIONS_MAX_CHARS:
        raise ValidationError(
            {"instructions": f"Keep the instructions under {INSTRUCTIONS_MAX_CHARS:,} characters."}
        )
    if "\x00" in instructions:
        raise ValidationError({"instructions": "The text contains a NUL character."})
    workspace = Workspace.objects.select_for_update().get(pk=actor.workspace_id)
    if workspace.instructions == instructions:
        return workspace
    before = len(workspace.instructions)
    workspace.instructions = instructions
    workspace.save(update_fields=["instructions"])
    record_event(
        actor=actor.user,
        action=Action.SETTINGS_CHANGED,
        workspace=workspace,
        target="workspace instructions",
        data={"chars_before": before, "chars_after": len(instructions)},
    )
    return workspace


def _lock_owners(workspace: Workspace) -> int:
    """Lock the owner rows and count them, so two demotions cannot race past the last owner."""
    return len(
        list(
            Membership.objects.select_for_update()
            .filter(workspace=workspace, role=Role.OWNER)
            .values_list("id", flat=True)
        )
    )


@transaction.atomic
def change_role(*, actor: Membership, membership: Membership, role: str) -> Membership:
    _require_owner(actor)
    if role not in Role.values:
        raise ValidationError({"role": f"Unknown role {role!r}."})
    if membership.workspace_id != actor.workspace_id:
        raise PermissionDenied("That member belongs to another workspace.")
    if membership.role == Role.OWNER and role != Role.OWNER and _lock_owners(actor.workspace) <= 1:
        raise ValidationError({"role": "A workspace must keep at least one owner."})
    old_role = membership.role
    membership.role = role
    membership.save(update_fields=["role"])
    record_event(
        actor=actor.user,
        action=Action.MEMBER_ROLE_CHANGED,
        workspace=actor.workspace,
        target=membership.user.get_username(),
        data={"from": old_role, "to": role},
    )
    user_id = membership.user_id  # their open sockets take the new role at once
    transaction.on_commit(lambda: broadcast.access_changed(user_id))
    return membership


@transaction.atomic
def remove_member(*, actor: Membership, membership: Membership) -> None:
    if actor.pk != membership.pk:
        _require_owner(actor)
    if membership.workspace_id != actor.workspace_id:
        raise PermissionDenied("That member belongs to another workspace.")
    if membership.role == Role.OWNER and _lock_owners(actor.workspace) <= 1:
        raise ValidationError(
            "A workspace must keep at least one owner: make someone else an owner first."
        )
    leaving = actor.pk == membership.pk
    record_event(
        actor=actor.user,
        action=Action.MEMBER_LEFT if leaving else Action.MEMBER_REMOVED,
        workspace=actor.workspace,
        target=membership.user.get_username(),
        data={"role": membership.role},
    )
    workspace_id, user_id = membership.workspace_id, membership.user_id
    membership.delete()
    # Their open sockets close at once rather than at their next post.
    transaction.on_commit(lambda: broadcast.membership_ended(workspace_id, user_id))


def leave_workspace(*, membership: Membership) -> None:
    remove_member(actor=membership, membership=membership)


@dataclass(frozen=True)
class NewInvitation:
    invitation: Invitation
    token: str  # shown once; only its hash is stored


@transaction.atomic
def create_invitation(
    *, actor: Membership, role: str, max_uses: int = 1, days: int | None = None
) -> NewInvitation:
    _require_owner(actor)
    if role not in (Role.EDITOR, Role.VIEWER):
        raise ValidationError({"role": "Invite people as editors or viewers."})
    if not 1 <= max_uses <= 1000:
        raise ValidationError({"max_uses": "Between 1 and 1000 uses."})
    days = settings.INVITATION_DEFAULT_DAYS if days is None else days
    if not 1 <= days <= 90:
        raise ValidationError({"days": "Between 1 and 90 days."})
    token = secrets.token_urlsafe(24)
    invitation = Invitation.objects.create(
        workspace=actor.workspace,
        role=role,
        token_hash=hash_token(token),
        created_by=actor.user,
        expires_at=timezone.now() + timedelta(days=days),
        max_uses=max_uses,
    )
    record_event(
        actor=actor.user,
        action=Action.INVITATION_CREATED,
        workspace=actor.workspace,
        target=f"invitation {invitation.pk}",
        data={"role": role, "max_uses": max_uses, "days": days},
    )
    return NewInvitation(invitation=invitation, token=token)


@transaction.atomic
def revoke_invitation(*, actor: Membership, invitation: Invitation) -> None:
    _require_owner(actor)
    if invitation.workspace_id != actor.workspace_id:
        raise PermissionDenied("That invitation belongs to another workspace.")
    if invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        record_event(
            actor=actor.user,
            action=Action.INVITATION_REVOKED,
            workspace=actor.workspace,
            target=f"invitation {invitation.pk}",
        )


def find_invitation(token: str) -> Invitation | None:
    return (
        Invitation.objects.select_related("workspace").filter(token_hash=hash_token(token)).first()
    )


@transaction.atomic
def accept_invitation(*, user: User, token: str) -> Membership:
    """Join the invitation's workspace. Members who accept again keep their current role."""
    invitation = Invitation.objects.select_for_update().filter(token_hash=hash_token(token)).first()
    if invitation is None:
        raise ValidationError("This invitation link is not valid.")
    existing = Membership.objects.filter(workspace_id=invitation.workspace_id, user=user).first()
    if existing is not None:
        return existing
    if not invitation.is_usable:
        raise ValidationError(f"This invitation link is {invitation.state}.")
    invitation.uses += 1
    invitation.save(update_fields=["uses"])
    membership = Membership.objects.create(
        workspace_id=invitation.workspace_id, user=user, role=invitation.role
    )
    record_event(
        actor=user,
        action=Action.MEMBER_JOINED,
        workspace=invitation.workspace,
        target=user.get_username(),
        data={"role": invitation.role, "invitation": invitation.pk},
    )
    return membership
