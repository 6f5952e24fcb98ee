"""Writes of the review app: workspace review settings, the audit record of each export, and
of each read of someone's memory on a turn's trace."""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from agents.memory.services import record_admin_read
from agents.review.models import ReviewSettings
from agents.review.selectors import ReviewScope
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
