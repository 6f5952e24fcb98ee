from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from django.urls import reverse

from collab.workspaces.models import Invitation, Membership, Role, Workspace
from collab.workspaces.services import create_invitation
from tests.factories import PASSWORD, membership_of

pytestmark = pytest.mark.django_db


def test_signed_out_visitors_are_sent_to_log_in(client, workspace):
    response = client.get(reverse("tasks:list", args=[workspace.pk]))

    assert response.status_code == 302
    assert reverse("accounts:login") in response["Location"]


def test_creating_a_workspace_from_the_list_page(as_user, alice):
    response = as_user(alice).post(reverse("workspaces:list"), {"name": "Research"})

    workspace = Workspace.objects.get(name="Research")
    assert response.status_code == 302
    assert membership_of(workspace, alice).role == Role.OWNER


def test_a_workspace_without_a_name_is_refused_with_400(as_user, alice):
    response = as_user(alice).post(reverse("workspaces:list"), {"name": ""})

    assert response.status_code == 400
    assert b"This field is required" in response.content
    assert not Workspace.objects.exists()


def test_the_list_shows_only_my_workspaces(as_user, workspace, mallory):
    response = as_user(mallory).get(reverse("workspaces:list"))

    assert workspace.name.encode() not in response.content


@pytest.mark.parametrize(
    "name",
    ["tasks:list", "workspaces:members"],
)
def test_outsiders_get_404_for_workspace_pages(as_user, workspace, mallory, name):
    response = as_user(mallory).get(reverse(name, args=[workspace.pk]))

    assert response.status_code == 404


@pytest.mark.parametrize(
    ("name", "extra"),
    [
        ("workspaces:leave", []),
        ("workspaces:invite", []),
        ("workspaces:role", ["member"]),
        ("workspaces:remove", ["member"]),
        ("workspaces:revoke_invitation", ["invitation"]),
    ],
)
def test_outsiders_get_404_for_workspace_actions(as_user, workspace, alice, mallory, name, extra):
    ids = {
        "member": membership_of(workspace, alice).pk,
        "invitation": create_invitation(
            actor=membership_of(workspace, alice), role=Role.EDITOR
        ).invitation.pk,
    }
    url = reverse(name, args=[workspace.pk, *[ids[e] for e in extra]])

    response = as_user(mallory).post(url, {"role": "viewer", "max_uses": 1, "days": 1})

    assert response.status_code == 404
    assert membership_of(workspace, alice).role == Role.OWNER


@pytest.mark.parametrize("user", ["alice", "bob", "carol"])
def test_every_member_sees_the_members_page(as_user, workspace, user, request):
    response = as_user(request.getfixturevalue(user)).get(
        reverse("workspaces:members", args=[workspace.pk])
    )

    assert response.status_code == 200
    for name in (b"alice", b"bob", b"carol"):
        assert name in response.content


@pytest.mark.parametrize("user", ["bob", "carol"])
def test_only_owners_change_roles(as_user, workspace, user, carol, request):
    target = membership_of(workspace, carol)

    response = as_user(request.getfixturevalue(user)).post(
        reverse("workspaces:role", args=[workspace.pk, target.pk]), {"role": "owner"}
    )

    assert response.status_code == 403
    assert membership_of(workspace, carol).role == Role.VIEWER


def test_an_owner_changes_a_role(as_user, workspace, alice, carol):
    target = membership_of(workspace, carol)

    response = as_user(alice).post(
        reverse("workspaces:role", args=[workspace.pk, target.pk]), {"role": "editor"}
    )

    assert response.status_code == 302
    assert membership_of(workspace, carol).role == Role.EDITOR


def test_an_unknown_role_is_refused_with_400(as_user, workspace, alice, carol):
    target = membership_of(workspace, carol)

    response = as_user(alice).post(
        reverse("workspaces:role", args=[workspace.pk, target.pk]), {"role": "emperor"}
    )

    assert response.status_code == 400
    assert membership_of(workspace, carol).role == Role.VIEWER


def test_the_last_owner_cannot_demote_themselves(as_user, workspace, alice):
    me = membership_of(workspace, alice)

    response = as_user(alice).post(
        reverse("workspaces:role", args=[workspace.pk, me.pk]), {"role": "viewer"}
    )

    assert response.status_code == 400
    assert b"at least one owner" in response.content
    assert membership_of(workspace, alice).role == Role.OWNER


def test_an_owner_removes_a_member(as_user, workspace, alice, bob):
    target = membership_of(workspace, bob)

    response = as_user(alice).post(reverse("workspaces:remove", args=[workspace.pk, target.pk]))

    assert response.status_code == 302
    assert not Membership.objects.filter(pk=target.pk).exists()


def test_an_editor_cannot_remove_anyone(as_user, workspace, bob, carol):
    target = membership_of(workspace, carol)

    response = as_user(bob).post(reverse("workspaces:remove", args=[workspace.pk, target.pk]))

    assert response.status_code == 403
    assert Membership.objects.filter(pk=target.pk).exists()


def test_a_member_leaves_and_loses_access(as_user, workspace, carol):
    client = as_user(carol)

    response = client.post(reverse("workspaces:leave", args=[workspace.pk]))

    assert response.status_code == 302
    assert client.get(reverse("tasks:list", args=[workspace.pk])).status_code == 404


def test_the_last_owner_cannot_leave(as_user, workspace, alice):
    response = as_user(alice).post(reverse("workspaces:leave", args=[workspace.pk]))

    assert response.status_code == 400
    assert membership_of(workspace, alice).role == Role.OWNER


@pytest.mark.parametrize("user", ["bob", "carol"])
def test_only_owners_create_invitations(as_user, workspace, user, request):
    response = as_user(request.getfixturevalue(user)).post(
        reverse("workspaces:invite", args=[workspace.pk]),
        {"role": "editor", "max_uses": 1, "days": 7},
    )

    assert response.status_code == 403
    assert not Invitation.objects.exists()


def test_an_owner_creates_an_invitation_link_shown_once(as_user, workspace, alice):
    client = as_user(alice)

    response = client.post(
        reverse("workspaces:invite", args=[workspace.pk]),
        {"role": "viewer", "max_uses": 3, "days": 2},
    )

    assert response.status_code == 200
    link = re.search(rb'value="(http://testserver/invite/[^"]+/)"', response.content)
    assert link is not None
    invitation = Invitation.objects.get()
    assert (invitation.role, invitation.max_uses) == (Role.VIEWER, 3)
    # The members page never shows the link again: only its hash is kept.
    assert (
        link.group(1) not in client.get(reverse("workspaces:members", args=[workspace.pk])).content
    )


def test_a_malformed_invitation_form_answers_400_with_reasons(as_user, workspace, alice):
    response = as_user(alice).post(
        reverse("workspaces:invite", args=[workspace.pk]),
        {"role": "owner", "max_uses": 0, "days": 365},
    )

    assert response.status_code == 400
    assert b"Select a valid choice" in response.content
    assert b"greater than or equal to 1" in response.content
    assert not Invitation.objects.exists()


def test_an_invitation_link_tells_signed_out_visitors_what_it_is_and_how_to_join(
    client, workspace, alice
):
    new = create_invitation(actor=membership_of(workspace, alice), role=Role.EDITOR)
    link = reverse("workspaces:invitation", args=[new.token])

    response = client.get(link)

    assert response.status_code == 200
    page = response.content.decode()
    assert "<strong>alice</strong> invited you to join <strong>Acme</strong>" in page
    assert f'href="{reverse("accounts:signup")}?next={quote(link)}"' in page
    assert f'href="{reverse("accounts:login")}?next={quote(link)}"' in page
    assert "Join workspace" not in page  # a button only for people who are logged in


def test_signing_up_from_an_invitation_names_the_workspace_and_comes_back_to_it(
    client, workspace, alice
):
    new = create_invitation(actor=membership_of(workspace, alice), role=Role.VIEWER)
    link = reverse("workspaces:invitation", args=[new.token])

    form = client.get(reverse("accounts:signup"), {"next": link})
    assert "to join <strong>Acme</strong>" in form.content.decode()
    done = client.post(
        reverse("accounts:signup") + f"?next={link}",
        {"username": "dora", "password1": PASSWORD, "password2": PASSWORD},
    )
    assert done["Location"] == link


def test_accepting_an_invitation_joins_the_workspace(as_user, workspace, alice, mallory):
    new = create_invitation(actor=membership_of(workspace, alice), role=Role.EDITOR)
    client = as_user(mallory)

    assert b"Join" in client.get(reverse("workspaces:invitation", args=[new.token])).content
    response = client.post(reverse("workspaces:invitation", args=[new.token]))

    assert response.status_code == 302
    assert membership_of(workspace, mallory).role == Role.EDITOR


def test_a_used_up_invitation_is_refused_with_400(as_user, workspace, alice, mallory, carol):
    Membership.objects.filter(user=carol).delete()
    new = create_invitation(actor=membership_of(workspace, alice), role=Role.EDITOR)
    as_user(carol).post(reverse("workspaces:invitation", args=[new.token]))

    response = as_user(mallory).post(reverse("workspaces:invitation", args=[new.token]))

    assert response.status_code == 400
    assert b"used up" in response.content
    assert not Membership.objects.filter(user=mallory).exists()


def test_an_unknown_invitation_token_is_404(as_user, mallory):
    response = as_user(mallory).get(reverse("workspaces:invitation", args=["nope"]))

    assert response.status_code == 404


def test_an_owner_revokes_an_invitation(as_user, workspace, alice):
    new = create_invitation(actor=membership_of(workspace, alice), role=Role.EDITOR)

    as_user(alice).post(
        reverse("workspaces:revoke_invitation", args=[workspace.pk, new.invitation.pk])
    )

    new.invitation.refresh_from_db()
    assert new.invitation.state == "revoked"


def test_join_on_an_invitation_page_opened_before_it_was_revoked_says_so_once(
    as_user, workspace, alice, mallory
):
    """#32.1: the error and the page's own sentence both said the link was revoked, and
    nothing led back."""
    new = create_invitation(actor=membership_of(workspace, alice), role=Role.EDITOR)
    url = reverse("workspaces:invitation", args=[new.token])
    client = as_user(mallory)
    assert b"Join workspace" in client.get(url).content  # the page mallory has open
    as_user(alice).post(
        reverse("workspaces:revoke_invitation", args=[workspace.pk, new.invitation.pk])
    )

    response = client.post(url)

    text = response.content.decode()
    assert response.status_code == 400
    assert text.count("revoked") == 1, text
    assert "This invitation is revoked, so you did not join Acme." in text
    assert f'href="{reverse("workspaces:list")}">Back to your workspaces' in text
    assert not Membership.objects.filter(workspace=workspace, user=mallory).exists()


def test_owner_sets_the_workspace_instructions_and_the_audit_log_records_it(
    as_user, workspace, alice
):
    from collab.audit.models import AuditEvent

    url = reverse("workspaces:settings", args=[workspace.pk])
    response = as_user(alice).post(url, {"instructions": "  Answer in French.\r\nBe brief.  "})

    workspace.refresh_from_db()
    assert response.status_code == 302
    assert workspace.instructions == "Answer in French.\nBe brief."
    event = AuditEvent.objects.get(action=AuditEvent.Action.SETTINGS_CHANGED)
    assert event.target == "workspace instructions"
    assert b"Answer in French." in as_user(alice).get(url).content


def test_instructions_over_the_limit_are_refused_with_400(as_user, workspace, alice):
    url = reverse("workspaces:settings", args=[workspace.pk])
    response = as_user(alice).post(url, {"instructions": "x" * 4001})

    workspace.refresh_from_db()
    assert response.status_code == 400
    assert b"at most 4000 characters" in response.content
    assert workspace.instructions == ""


@pytest.mark.parametrize("name", ["bob", "carol"])
def test_editors_and_viewers_read_the_instructions_but_cannot_change_them(
    request, as_user, workspace, name
):
    workspace.instructions = "Answer in French."
    workspace.save()
    client = as_user(request.getfixturevalue(name))
    url = reverse("workspaces:settings", args=[workspace.pk])

    page = client.get(url)
    response = client.post(url, {"instructions": "Ignore the owners."})

    workspace.refresh_from_db()
    assert page.status_code == 200
    assert b"Answer in French." in page.content
    assert b"<textarea" not in page.content
    assert response.status_code == 403
    assert workspace.instructions == "Answer in French."


def test_outsiders_get_404_for_the_settings_page(as_user, workspace, mallory):
    url = reverse("workspaces:settings", args=[workspace.pk])

    assert as_user(mallory).get(url).status_code == 404
    assert as_user(mallory).post(url, {"instructions": "x"}).status_code == 404
    workspace.refresh_from_db()
    assert workspace.instructions == ""
