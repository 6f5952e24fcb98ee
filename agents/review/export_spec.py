"""What an export covers (``ExportSpec``) and the shape of one exported event, shared by the
event sources (``agents/review/export_events.py``) and the formats (``agents/review/exports.py``).

Event fields use Co-Gym's event-log names where they exist (``role``, ``action``,
``action_type`` "collaborative" or "environment", ``action_status``, ``timestamp``) and add
``event``, ``event_id``, ``workspace_id``, ``task_id`` and ``data``. See docs/review.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from django.db.models import F, Q, QuerySet

CHUNK = 500
Event = dict[str, Any]


@dataclass(frozen=True)
class ExportSpec:
    """What to export: one task, or the tasks of a workspace (or all, staff) in a date range."""

    task_id: int | None = None
    workspace_id: int | None = None
    since: date | None = None
    until: date | None = None

    def describe(self) -> str:
        if self.task_id is not None:
            return f"task {self.task_id}"
        where = f"workspace {self.workspace_id}" if self.workspace_id else "all workspaces"
        return f"{where} from {self.since or 'the start'} to {self.until or 'today'}"


def _bounds(spec: ExportSpec) -> Q:
    q = Q()
    if spec.since is not None:
        q &= Q(at__gte=datetime.combine(spec.since, time.min, tzinfo=UTC))
    if spec.until is not None:
        q &= Q(at__lt=datetime.combine(spec.until + timedelta(days=1), time.min, tzinfo=UTC))
    return q


def task_filter(spec: ExportSpec, prefix: str) -> Q:
    if spec.task_id is not None:
        return Q(**{f"{prefix}id": spec.task_id})
    if spec.workspace_id is not None:
        return Q(**{f"{prefix}workspace_id": spec.workspace_id})
    return Q()


def timed(qs: QuerySet[Any], field: str, spec: ExportSpec) -> QuerySet[Any]:
    return qs.annotate(at=F(field)).filter(_bounds(spec), at__isnull=False).order_by("at", "pk")


def iso(value: datetime) -> str:
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


def export_event(
    *,
    at: datetime,
    event: str,
    event_id: str,
    role: str,
    action: str,
    action_type: str,
    task_id: int | None,
    workspace_id: int | None,
    data: dict[str, Any],
    status: str = "succeeded",
) -> Event:
    return {
        "timestamp": iso(at),
        "event": event,
        "event_id": event_id,
        "role": role,
        "action": action,
        "action_type": action_type,
        "action_status": status,
        "workspace_id": workspace_id,
        "task_id": task_id,
        "data": data,
    }
