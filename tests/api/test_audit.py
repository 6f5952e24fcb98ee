"""The audit log pages over the API: a workspace's log for its owners (and staff), the whole
site's for staff, with the page's filters."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User

from collab.audit.models import AuditEvent
from collab.workspaces import services as workspace_services
from collab.workspaces.models import Workspace
from tests import factories
from tests.api.conftest import ApiClientFactory

pytestmark = pytest.mark.django_db


def test_owners_read_their_workspaces_audit_log_with_its_filters(
    workspace: Workspace,
    alice: User,
    bob: User,
    carol: User,
    mallory: User,
    api_as: ApiClientFactory,
) -> None:
    workspace_services.leave_workspace(membership=factories.membership_of(workspace, carol))
    url = f"/api/workspaces/{workspace.pk}/audit"

    assert api_as(bob).get(url).status_code == 403
    assert api_as(mallory).get(url).status_code == 404
    log = api_as(alice).get(url, {"action": AuditEvent.Action.MEMBER_LEFT})

    assert log.status_code == 200, log.json()
    assert [(e["actor"], e["action"]) for e in log.json()["events"]] == [("carol", "member.left")]
    assert api_as(alice).get(url, {"action": "nonsense"}).status_code == 400
    assert api_as(alice).get(url, {"since": "yesterday"}).status_code == 400


def test_only_staff_read_the_whole_sites_audit_log(
    workspace: Workspace, alice: User, carol: User, api_as: ApiClientFactory
) -> None:
    staff = User.objects.create_user(username="root", password="x", is_staff=True)
    workspace_services.leave_workspace(membership=factories.membership_of(workspace, carol))

    assert api_as(alice).get("/api/audit").status_code == 404
    log = api_as(staff).get("/api/audit", {"actor": "carol"})

    assert log.status_code == 200
    assert [e["workspace_id"] for e in log.json()["events"]] == [workspace.pk]
