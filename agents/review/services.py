"""Writes of the review app: workspace review settings, the audit record of each export, and
of each read of someone's memory on a turn's trace."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.http import Http404

from agents.memory.services import record_admin_read
from agents.models import Turn
from agents.review.export_spec import ExportSpec
from agents.review.exports import jsonl_lines, turns_csv_lines
from agents.review.models import ReviewSettings
from agents.review.selectors import ReviewScope, get_review_scope, get_review_settings
from agents.review.traces import TurnTrace, get_turn_trace
from collab.audit.models import AuditEvent
from collab.audit.services import record_event


@transaction.atomic
def record_trace_memory_reads(*, actor: User, owner_ids: Iterable[int], turn_id: int) -> None:
    """A staff member was shown the unshared memory of ``owner_ids`` (who allowed admins to
    read it) on turn ``turn_id``'s trace: each read is audited as on the admin memory page."""
    for subject in User.objects.filter(pk__in=set(owner_ids)).order_by("pk"):
        record_admin_read(admin=actor, subject=subject, where=f"trace of turn {turn_id}")


SETTING_FIELDS = ("monthly_budget", "warn_at_percent", "hard_stop", "export_personal_memory")


def _plain(value: Any) -> Any:
    return str(value) if isinstance(value, Decimal) else value


@transaction.atomic
def update_review_settings(
    *,
    actor: User,
    scope: ReviewScope,
    monthly_budget: Decimal | None,
    warn_at_percent: int,
    hard_stop: bool,
    export_personal_memory: bool,
) -> ReviewSettings:
    """Owners (and staff) change a workspace's budget and export settings; audited."""
    workspace = scope.workspace
    if workspace is None:
        raise PermissionDenied("Settings belong to one workspace.")
    if monthly_budget is not None and monthly_budget < 0:
        raise ValidationError({"monthly_budget": "A budget cannot be negative."})
    if not 1 <= warn_at_percent <= 100:
        raise ValidationError({"warn_at_percent": "Use a percentage from 1 to 100."})
    found, _ = ReviewSettings.objects.select_for_update().get_or_create(workspace=workspace)
    new = {
        "monthly_budget": monthly_budget,
        "warn_at_percent": warn_at_percent,
        "hard_stop": hard_stop,
        "export_personal_memory": export_personal_memory,
    }
    changes = {
        name: {"from": _plain(getattr(found, name)), "to": _plain(value)}
        for name, value in new.items()
        if getattr(found, name) != value
    }
    if not changes:
        return found
    for name, value in new.items():
        setattr(found, name, value)
    found.updated_by = actor
    found.save()
    record_event(
        actor=actor,
        action=AuditEvent.Action.SETTINGS_CHANGED,
        workspace=workspace,
        target="review settings",
        data=changes,
    )
    return found


@transaction.atomic
def record_export(
    *, actor: User, scope: ReviewScope, what: str, fmt: str, **data: Any
) -> AuditEvent:
    """Every export is audited before its first byte is sent."""
    return record_event(
        actor=actor,
        action=AuditEvent.Action.EXPORT,
        workspace=scope.workspace,
        target=f"{what} as {fmt}"[:200],
        data={"format": fmt, **{k: _plain(v) for k, v in data.items()}},
    )


def start_export(*, actor: User, scope: ReviewScope, spec: ExportSpec, fmt: str) -> Iterator[str]:
    """Audit an export (``jsonl``: the event log; ``csv``: one row per turn) and return its
    lines, read lazily as they are sent: what the review pages and the API both serve."""
    settings = get_review_settings(scope.workspace) if scope.workspace is not None else None
    where: dict[str, Any] = (
        {"task_id": spec.task_id}
        if spec.task_id is not None
        else {
            "since": spec.since and spec.since.isoformat(),
            "until": spec.until and spec.until.isoformat(),
        }
    )
    record_export(
        actor=actor,
        scope=scope,
        what=spec.describe(),
        fmt=fmt,
        **where,
        personal_memory=bool(settings and settings.export_personal_memory),
    )
    if fmt == "csv":
        return turns_csv_lines(spec)
    return jsonl_lines(spec, settings)


def open_turn_trace(*, viewer: User, turn_id: int) -> tuple[ReviewScope, TurnTrace]:
    """One turn's trace for its workspace's owners and staff (outsiders 404, other members
    403), as ``viewer`` may see it; a staff read of someone's memory on it is audited."""
    workspace_id = (
        Turn.objects.filter(pk=turn_id).values_list("task__workspace_id", flat=True).first()
    )
    if workspace_id is None:
        raise Http404("No such turn.")
    scope = get_review_scope(viewer, workspace_id)
    trace = get_turn_trace(scope=scope, turn_id=turn_id, viewer=viewer)
    if trace.memory.read_of:
        record_trace_memory_reads(actor=viewer, owner_ids=trace.memory.read_of, turn_id=turn_id)
    return scope, trace
