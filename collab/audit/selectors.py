from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db.models import QuerySet

from collab.audit.models import AuditEvent
from collab.workspaces.models import Workspace


@dataclass(frozen=True)
class AuditFilter:
    action: str = ""
    actor: str = ""
    since: date | None = None
    until: date | None = None


def list_audit_events(
    *, workspace: Workspace | None, filters: AuditFilter = AuditFilter()
) -> QuerySet[AuditEvent]:
    """Events of one workspace, or of everything (``workspace=None``, staff only)."""
    events = AuditEvent.objects.select_related("workspace")
    if workspace is not None:
        events = events.filter(workspace=workspace)
    if filters.action:
        events = events.filter(action=filters.action)
    if filters.actor:
        events = events.filter(actor_label=filters.actor)
    if filters.since:
        events = events.filter(created_at__date__gte=filters.since)
    if filters.until:
        events = events.filter(created_at__date__lte=filters.until)
    return events.order_by("-created_at", "-id")
