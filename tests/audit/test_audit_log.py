from __future__ import annotations

import pytest
from django.urls import reverse

from collab.accounts.services import create_api_token, revoke_api_token
from collab.audit.models import AuditEvent
from collab.workspaces import services
from collab.workspaces.models import Role
from tests.factories import membership_of

pytestmark = pytest.mark.django_db
Action = AuditEvent.Action


def actions(workspace=None):
    events = AuditEvent.objects.order_by("id")
    if workspace is not None:
        events = events.filter(workspace=workspace)
    return list(events.values_list("action", flat=True))


def test_membership_changes_are_audited_with_who_and_what(workspace, alice, bob, carol):
    owner = membership_of(workspace, alice)

    services.change_role(actor=owner, membership=membership_of(workspace, carol), role=Role.EDITOR)
    services.remove_member(actor=owner, membership=membership_of(workspace, bob))
    services.leave_workspace(membership=membership_of(workspace, carol))

    assert actions(workspace)[-3:] == [
        Action.MEMBER_ROLE_CHANGED,
        Action.MEMBER_REMOVED,
        Action.MEMBER_LEFT,
    ]
    role_change = AuditEvent.objects.get(action=Action.MEMBER_ROLE_CHANGED)
    assert (role_change.actor_label, role_change.target) == ("alice", "carol")
    assert role_change.data == {"from": "viewer", "to": "editor"}


def test_invitations_are_audited_from_creation_to_use(workspace, alice, mallory):
    owner = membership_of(workspace, alice)
    first = services.create_invitation(actor=owner, role=Role.EDITOR)
    second = services.create_invitation(actor=owner, role=Role.VIEWER)

    services.accept_invitation(user=mallory, token=first.token)
    services.revoke_invitation(actor=owner, invitation=second.invitation)

    assert actions(workspace)[-4:] == [
        Action.INVITATION_CREATED,
        Action.INVITATION_CREATED,
        Action.MEMBER_JOINED,
        Action.INVITATION_REVOKED,
    ]


def test_a_refused_change_leaves_no_audit_event(workspace, alice):
    owner = membership_of(workspace, alice)
    before = AuditEvent.objects.count()

    with pytest.raises(Exception, match="at least one owner"):
        services.leave_workspace(membership=owner)

    assert AuditEvent.objects.count() == before


def test_api_tokens_are_audited(alice):
    new = create_api_token(user=alice, name="laptop")
    revoke_api_token(user=alice, token_id=new.api_token.pk)

    assert actions()[-2:] == [Action.API_TOKEN_CREATED, Action.API_TOKEN_REVOKED]
    assert new.token not in str(AuditEvent.objects.values_list("target", "data"))


def test_web_actions_record_where_they_came_from(as_user, workspace, alice):
    as_user(alice).post(
        reverse("workspaces:invite", args=[workspace.pk]),
        {"role": "editor", "max_uses": 1, "days": 1},
        REMOTE_ADDR="203.0.113.9",
        HTTP_USER_AGENT="Firefox",
    )

    event = AuditEvent.objects.get(action=Action.INVITATION_CREATED)
    assert (event.via, event.ip, event.user_agent) == ("web", "203.0.113.9", "Firefox")


def _invite_from(client, workspace, **meta):
    client.post(
        reverse("workspaces:invite", args=[workspace.pk]),
        {"role": "editor", "max_uses": 1, "days": 1},
        **meta,
    )
    return AuditEvent.objects.filter(action=Action.INVITATION_CREATED).latest("id").ip


def test_a_forwarded_for_header_is_ignored_when_no_proxy_is_trusted(as_user, workspace, alice):
    forged = {"REMOTE_ADDR": "203.0.113.9", "HTTP_X_FORWARDED_FOR": "198.51.100.1"}
    assert _invite_from(as_user(alice), workspace, **forged) == "203.0.113.9"


def test_behind_a_trusted_proxy_the_client_it_reports_is_recorded(
    as_user, workspace, alice, settings
):
    settings.TRUSTED_PROXIES = ["10.0.0.0/8"]
    client = as_user(alice)
    # the proxy (10.0.0.2) appended the address it saw; what the client sent left of it is not
    # believed, nor is a request that reaches the site directly with the header
    via_proxy = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "1.2.3.4, 203.0.113.7"}
    assert _invite_from(client, workspace, **via_proxy) == "203.0.113.7"
    two_proxies = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "203.0.113.7, 10.0.0.9"}
    assert _invite_from(client, workspace, **two_proxies) == "203.0.113.7"
    direct = {"REMOTE_ADDR": "198.51.100.5", "HTTP_X_FORWARDED_FOR": "203.0.113.7"}
    assert _invite_from(client, workspace, **direct) == "198.51.100.5"
    garbage = {"REMOTE_ADDR": "10.0.0.2", "HTTP_X_FORWARDED_FOR": "not-an-address"}
    assert _invite_from(client, workspace, **garbage) == "10.0.0.2"


def test_a_mistyped_trusted_proxy_stops_the_process_at_start_up():
    from django.core.exceptions import ImproperlyConfigured

    from collab.lib.addresses import parse_networks

    with pytest.raises(ImproperlyConfigured, match="TRUSTED_PROXIES"):
        parse_networks(["10.0.0.0/8", "10.0.0.300"])


def test_audit_events_are_append_only(workspace):
    event = AuditEvent.objects.first()

    with pytest.raises(ValueError, match="append-only"):
        event.save()
    with pytest.raises(ValueError, match="append-only"):
        event.delete()


def test_owners_read_their_workspace_audit_log(as_user, workspace, alice, bob):
    services.change_role(
        actor=membership_of(workspace, alice),
        membership=membership_of(workspace, bob),
        role="viewer",
    )

    response = as_user(alice).get(reverse("audit:workspace", args=[workspace.pk]))

    assert response.status_code == 200
    assert b"member.role_changed" in response.content


@pytest.mark.parametrize(("user", "status"), [("bob", 403), ("carol", 403), ("mallory", 404)])
def test_nobody_else_reads_a_workspace_audit_log(as_user, workspace, user, status, request):
    response = as_user(request.getfixturevalue(user)).get(
        reverse("audit:workspace", args=[workspace.pk])
    )

    assert response.status_code == status


def test_the_audit_log_filters_by_action_and_person(as_user, workspace, alice, bob):
    owner = membership_of(workspace, alice)
    services.create_invitation(actor=owner, role=Role.EDITOR)
    services.change_role(actor=owner, membership=membership_of(workspace, bob), role="viewer")
    url = reverse("audit:workspace", args=[workspace.pk])

    only_roles = as_user(alice).get(url, {"action": "member.role_changed", "actor": "alice"})

    assert b"member.role_changed" in only_roles.content
    assert b"invitation.created</code>" not in only_roles.content


def test_a_bad_filter_answers_400(as_user, workspace, alice):
    response = as_user(alice).get(
        reverse("audit:workspace", args=[workspace.pk]), {"since": "yesterday-ish"}
    )

    assert response.status_code == 400
    assert b"Enter a valid date" in response.content


def test_the_site_wide_log_is_for_staff_only(as_user, workspace, alice, mallory):
    mallory.is_staff = True
    mallory.save()

    assert as_user(alice).get(reverse("audit:site")).status_code == 404
    staff_view = as_user(mallory).get(reverse("audit:site"))
    assert staff_view.status_code == 200
    assert b"workspace.created" in staff_view.content


def test_the_audit_log_costs_the_same_queries_for_many_events(
    as_user, workspace, alice, django_assert_max_num_queries
):
    owner = membership_of(workspace, alice)
    for _ in range(40):
        services.create_invitation(actor=owner, role=Role.EDITOR)
    client = as_user(alice)

    with django_assert_max_num_queries(6):
        client.get(reverse("audit:workspace", args=[workspace.pk]))
