from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from collab.workspaces import services
from collab.workspaces.models import Membership, Role
from tests.factories import membership_of


def test_creating_a_workspace_makes_its_creator_the_owner(alice):
    workspace = services.create_workspace(owner=alice, name="  Research  ")

    assert workspace.name == "Research"
    assert membership_of(workspace, alice).role == Role.OWNER


def test_a_workspace_always_keeps_an_owner(workspace, alice):
    owner = membership_of(workspace, alice)

    with pytest.raises(ValidationError, match="at least one owner"):
        services.change_role(actor=owner, membership=owner, role=Role.EDITOR)
    with pytest.raises(ValidationError, match="at least one owner"):
        services.leave_workspace(membership=owner)

    assert membership_of(workspace, alice).role == Role.OWNER


def test_an_owner_can_step_down_once_someone_else_owns(workspace, alice, bob):
    owner = membership_of(workspace, alice)
    services.change_role(actor=owner, membership=membership_of(workspace, bob), role=Role.OWNER)

    services.change_role(actor=owner, membership=owner, role=Role.VIEWER)

    assert membership_of(workspace, alice).role == Role.VIEWER


def test_only_owners_manage_members(workspace, bob, carol):
    editor = membership_of(workspace, bob)

    with pytest.raises(PermissionDenied):
        services.change_role(actor=editor, membership=membership_of(workspace, carol), role="owner")
    with pytest.raises(PermissionDenied):
        services.remove_member(actor=editor, membership=membership_of(workspace, carol))
    with pytest.raises(PermissionDenied):
        services.create_invitation(actor=editor, role=Role.EDITOR)


def test_an_invitation_is_single_use_by_default(workspace, alice, bob, mallory, carol):
    Membership.objects.filter(user=carol).delete()
    new = services.create_invitation(actor=membership_of(workspace, alice), role=Role.VIEWER)

    joined = services.accept_invitation(user=carol, token=new.token)

    assert joined.role == Role.VIEWER
    with pytest.raises(ValidationError, match="used up"):
        services.accept_invitation(user=mallory, token=new.token)
    assert not Membership.objects.filter(user=mallory).exists()


def test_a_capped_invitation_admits_that_many_people(workspace, alice, mallory, carol):
    Membership.objects.filter(user=carol).delete()
    new = services.create_invitation(
        actor=membership_of(workspace, alice), role=Role.EDITOR, max_uses=2
    )

    services.accept_invitation(user=carol, token=new.token)
    services.accept_invitation(user=mallory, token=new.token)

    new.invitation.refresh_from_db()
    assert new.invitation.uses == 2
    assert new.invitation.state == "used up"


def test_a_revoked_invitation_admits_nobody(workspace, alice, mallory):
    owner = membership_of(workspace, alice)
    new = services.create_invitation(actor=owner, role=Role.EDITOR)

    services.revoke_invitation(actor=owner, invitation=new.invitation)

    with pytest.raises(ValidationError, match="revoked"):
        services.accept_invitation(user=mallory, token=new.token)


def test_only_the_hash_of_an_invitation_token_is_stored(workspace, alice):
    new = services.create_invitation(actor=membership_of(workspace, alice), role=Role.EDITOR)

    assert new.token not in new.invitation.token_hash
    assert services.find_invitation(new.token) == new.invitation
