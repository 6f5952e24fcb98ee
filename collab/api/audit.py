"""/api/workspaces/{id}/audit and /api/audit: the audit log pages over the API. A workspace's
log for its owners (and staff; editors and viewers 403, outsiders 404), everything for staff
(anyone else 404), with the page's filters (its form) through ``list_audit_events``."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest
from ninja import Field, Query, Router, Schema

from collab.api.auth import current_user
from collab.api.pagination import PageFields, PageQuery, cursor_page
from collab.api.schemas import BadRequest, Error, PathId
from collab.audit.forms import AuditFilterForm
from collab.audit.selectors import AuditFilter, list_audit_events
from collab.workspaces.models import Workspace
from collab.workspaces.selectors import get_membership

workspace_router = Router(tags=["audit"])  # under /api/workspaces
site_router = Router(tags=["audit"])  # under /api/audit (staff)


class AuditQuery(PageQuery):
    action: str | None = Field(None, max_length=40, description="Only this action.")
    actor: str | None = Field(None, max_length=150, description="Only this username.")
    since: date | None = Field(None, description="From this day (inclusive).")
    until: date | None = Field(None, description="To this day (inclusive).")


class AuditEventOut(Schema):
    id: int
    created_at: datetime
    actor: str = Field(description="The username at the time of the event.")
    action: str = Field(description="e.g. `member.left`, `memory.exported`.")
    workspace_id: int | None
    target: str
    data: dict[str, Any]
    via: str = Field(description="`web`, `api`, `cli` or `worker`.")
    ip: str | None


class AuditPage(PageFields):
    events: list[AuditEventOut] = Field(description="Oldest first.")


def _page(workspace: Workspace | None, query: AuditQuery) -> dict[str, Any]:
    form = AuditFilterForm(
        {
            k: str(v)
            for k, v in query.dict().items()
            if v is not None and k in ("action", "actor", "since", "until")
        }
    )
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    events = list_audit_events(workspace=workspace, filters=AuditFilter(**form.cleaned_data))
    found = cursor_page(events, query)
    rows = [
        {
            "id": e.pk,
            "created_at": e.created_at,
            "actor": e.actor_label,
            "action": e.action,
            "workspace_id": e.workspace_id,
            "target": e.target,
            "data": e.data,
            "via": e.via,
            "ip": e.ip,
        }
        for e in found.rows
    ]
    return {"events": rows, **found.fields()}


@workspace_router.get(
    "/{workspace_id}/audit",
    response={200: AuditPage, 400: BadRequest, 401: Error, 403: Error, 404: Error},
    summary="Read a workspace's audit log with the page's filters, newest page first (owners)",
)
def workspace_audit(
    request: HttpRequest, workspace_id: PathId, query: Query[AuditQuery]
) -> dict[str, Any]:
    user = current_user(request)
    membership = get_membership(user, workspace_id)
    if not membership.is_owner and not user.is_staff:
        raise PermissionDenied("Only owners read the audit log.")
    return _page(membership.workspace, query)


@site_router.get(
    "",
    response={200: AuditPage, 400: BadRequest, 401: Error, 404: Error},
    summary="Read the whole site's audit log (staff)",
)
def site_audit(request: HttpRequest, query: Query[AuditQuery]) -> dict[str, Any]:
    if not current_user(request).is_staff:
        raise Http404("No such page.")
    return _page(None, query)
