"""Recording audit events. Call inside the service's transaction, so an event exists exactly
when the change it describes was committed."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User

from collab.audit.context import current_origin
from collab.audit.models import AuditEvent
from collab.workspaces.models import Workspace


def record_event(
    *,
    actor: User | None,
    action: str,
    workspace: Workspace | None = None,
    target: str = "",
    data: dict[str, Any] | None = None,
) -> AuditEvent:
    where = current_origin()
    return AuditEvent.objects.create(
        actor=actor,
        actor_label=actor.get_username() if actor is not None else "system",
        action=action,
        workspace=workspace,
        target=target[:200],
        data=data or {},
        ip=where.ip,
        user_agent=where.user_agent,
        via=where.via,
    )
