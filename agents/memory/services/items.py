"""Item management: what a person does on their Memory page (write, edit, pin, share, delete,
settings, forget everything) and the audited reads and exports of it."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from agents.memory import embeddings
from agents.memory.extractors import Proposal
from agents.memory.models import (
    Kind,
    MemoryCandidate,
    MemoryHistory,
    MemoryItem,
    MemorySettings,
    ReviewMode,
    Scope,
    Source,
    Status,
)
from agents.memory.services.reconciliation import (
    Action,
    Provenance,
    Reconciliation,
    end_item,
    lock_owner,
    reconcile_locked,
    record_history,
    settings_for,
    validate,
)
from collab.audit.models import AuditEvent
from collab.audit.services import record_event
from collab.lib.errors import Conflict
from collab.workspaces.models import Membership, Workspace


@transaction.atomic
def update_settings(
    *, user: User, enabled: bool, review_mode: str, admin_access_allowed: bool
) -> MemorySettings:
    if review_mode not in ReviewMode.values:
        raise ValidationError({"review_mode": f"Unknown review mode {review_mode!r}."})
    settings = lock_owner(user.pk)
    before = {
        "enabled": settings.enabled,
        "review_mode": settings.review_mode,
        "admin_access_allowed": settings.admin_access_allowed,
    }
    settings.enabled = enabled
    settings.review_mode = review_mode
    settings.admin_access_allowed = admin_access_allowed
    settings.save()
    after = {
        "enabled": enabled,
        "review_mode": review_mode,
        "admin_access_allowed": admin_access_allowed,
    }
    if before != after:
        record_event(
            actor=user,
            action=AuditEvent.Action.SETTINGS_CHANGED,
            target="memory settings",
            data={"before": before, "after": after},
        )
    return settings


# --- The memory page -------------------------------------------------------------------------


def _require_can_change(user: User, item: MemoryItem) -> None:
    if item.scope == Scope.TEAM:
        membership = Membership.objects.filter(workspace=item.workspace, user=user).first()
        if membership is None or not membership.can_edit:
            raise PermissionDenied("Only owners and editors change team memory.")
    elif item.owner_id != user.pk:
        raise PermissionDenied("This is someone else's memory.")
    if item.status != Status.ACTIVE:
        raise Conflict("Only current memories can be changed.")


@transaction.atomic
def create_item(
    *,
    user: User,
    text: str,
    kind: str = Kind.PREFERENCE,
    key: str = "",
    value: str = "",
    scope: str = Scope.PERSONAL,
    workspace: Workspace | None = None,
    kinds: tuple[str, ...] = (),
) -> Reconciliation:
    if scope == Scope.TEAM:
        assert workspace is not None
        membership = Membership.objects.filter(workspace=workspace, user=user).first()
        if membership is None or not membership.can_edit:
            raise PermissionDenied("Only owners and editors change team memory.")
    elif (
        workspace is not None
        and not Membership.objects.filter(workspace=workspace, user=user).exists()
    ):
        raise PermissionDenied("You are not a member of that workspace.")
    lock_owner(user.pk)
    return reconcile_locked(
        owner_id=user.pk,
        proposal=Proposal(text=text, kind=kind, key=key, value=value, confidence=1.0, kinds=kinds),
        scope=scope,
        workspace=workspace,
        provenance=Provenance(source_kind=Source.MANUAL, person_id=user.pk),
        actor=user,
    )


@transaction.atomic
def edit_item(
    *, user: User, item: MemoryItem, text: str, kind: str, key: str = "", value: str = ""
) -> MemoryItem:
    _require_can_change(user, item)
    text, key, value = validate(
        text=text, kind=kind, key=key, value=value, scope=item.scope, workspace=item.workspace
    )
    item.text, item.kind, item.key, item.value = text, kind, key, value
    item.confidence = 1.0  # the person wrote it themselves
    item.confirmed_at = timezone.now()
    item.save()
    record_history(item, Action.EDITED, user)
    embeddings.schedule([item.pk])
    return item


@transaction.atomic
def delete_item(*, user: User, item: MemoryItem) -> MemoryItem:
    """Ends the item now (kept in history until "forget everything")."""
    _require_can_change(user, item)
    end_item(item, Status.DELETED, timezone.now(), None)
    record_history(item, Action.DELETED, user)
    return item


@transaction.atomic
def set_pinned(*, user: User, item: MemoryItem, pinned: bool) -> MemoryItem:
    _require_can_change(user, item)
    if item.pinned != pinned:
        item.pinned = pinned
        item.save(update_fields=["pinned", "updated_at"])
        record_history(item, Action.PINNED if pinned else Action.UNPINNED, user)
    return item


@transaction.atomic
def set_shared(*, user: User, item: MemoryItem, shared: bool) -> MemoryItem:
    """The owner's "share with my workspaces" choice: a shared item may be used in replies
    other people read (in the owner's workspaces); unshared (the default) only in replies to
    the owner's own requests. Team memory is the workspace's already."""
    _require_can_change(user, item)
    if item.scope == Scope.TEAM:
        raise ValidationError("Team memory is shared with the workspace already.")
    if item.shared != shared:
        item.shared = shared
        item.save(update_fields=["shared", "updated_at"])
        record_history(item, Action.SHARED if shared else Action.UNSHARED, user)
    return item


@transaction.atomic
def use_everywhere(*, user: User, item: MemoryItem) -> Reconciliation:
    """The owner widens an item kept for one workspace (what agents and reflection write) to
    everywhere: it moves to their personal memory; the workspace item ends, pointing to it."""
    _require_can_change(user, item)
    if item.scope != Scope.WORKSPACE:
        raise ValidationError("Only an item kept for one workspace can be widened.")
    lock_owner(user.pk)
    result = reconcile_locked(
        owner_id=user.pk,
        proposal=Proposal.of(item, kinds=item.kind_list),
        scope=Scope.PERSONAL,
        workspace=None,
        provenance=Provenance(source_kind=Source.MANUAL, person_id=user.pk),
        actor=user,
    )
    if result.item is not None and result.item.shared != item.shared:
        result.item.shared = item.shared
        result.item.save(update_fields=["shared", "updated_at"])
    end_item(item, Status.SUPERSEDED, timezone.now(), result.item)
    record_history(item, Action.SUPERSEDED, user, note="Used everywhere")
    return result


# --- The review inbox ------------------------------------------------------------------------


@transaction.atomic
def accept_candidate(*, user: User, candidate: MemoryCandidate) -> Reconciliation:
    if candidate.owner_id != user.pk:
        raise PermissionDenied("Only the person it is about can accept it.")
    if candidate.decision != MemoryCandidate.Decision.PENDING:
        raise Conflict("This suggestion was already decided.")
    lock_owner(user.pk)
    result = reconcile_locked(
        owner_id=user.pk,
        proposal=Proposal.of(
            candidate,
            kinds=tuple(candidate.kinds.split()),
            forget=candidate.operation == MemoryCandidate.Operation.FORGET,
        ),
        scope=candidate.scope,
        workspace=candidate.workspace,
        provenance=Provenance(
            source_kind=candidate.source_kind,
            task_id=candidate.source_task_id,
            turn_id=candidate.source_turn_id,
            message_id=candidate.source_message_id,
            person_id=candidate.source_person_id,
        ),
        actor=user,
    )
    candidate.decision = MemoryCandidate.Decision.ACCEPTED
    candidate.decided_at = timezone.now()
    candidate.item = result.item
    candidate.save(update_fields=["decision", "decided_at", "item"])
    return result


@transaction.atomic
def reject_candidate(*, user: User, candidate: MemoryCandidate) -> MemoryCandidate:
    if candidate.owner_id != user.pk:
        raise PermissionDenied("Only the person it is about can reject it.")
    if candidate.decision != MemoryCandidate.Decision.PENDING:
        raise Conflict("This suggestion was already decided.")
    candidate.decision = MemoryCandidate.Decision.REJECTED
    candidate.decided_at = timezone.now()
    candidate.save(update_fields=["decision", "decided_at"])
    return candidate


@transaction.atomic
def forget_everything(*, user: User) -> dict[str, int]:
    """Hard-deletes the person's own memory (items, their history, suggestions).

    Team memory they wrote stays: it belongs to the workspace. The audit row keeps counts only.
    """
    lock_owner(user.pk)
    personal = MemoryItem.objects.filter(owner=user).exclude(scope=Scope.TEAM)
    counts = {
        "items": personal.count(),
        "history": MemoryHistory.objects.filter(item__in=personal).count(),
        "candidates": MemoryCandidate.objects.filter(owner=user).count(),
    }
    MemoryItem.objects.filter(superseded_by__in=personal).update(superseded_by=None)
    MemoryCandidate.objects.filter(owner=user).delete()
    personal.delete()
    record_event(
        actor=user,
        action=AuditEvent.Action.MEMORY_FORGOTTEN,
        target=f"memory of {user.get_username()} (user {user.pk})",
        data={"subject_user_id": user.pk, **counts},
    )
    return counts


@transaction.atomic
def record_admin_read(*, admin: User, subject: User, where: str = "") -> AuditEvent:
    """Admins may read someone's memory only if that person allowed it; every read is audited.
    ``where``: the page other than the memory page that showed it (a turn's trace)."""
    if not (admin.is_staff and settings_for(subject).admin_access_allowed):
        raise PermissionDenied("This person has not allowed admins to read their memory.")
    data: dict[str, object] = {"subject_user_id": subject.pk}
    if where:
        data["where"] = where
    return record_event(
        actor=admin,
        action=AuditEvent.Action.MEMORY_ADMIN_ACCESS,
        target=f"memory of {subject.get_username()} (user {subject.pk})",
        data=data,
    )


@transaction.atomic
def record_export(*, user: User, items: int) -> AuditEvent:
    return record_event(
        actor=user,
        action=AuditEvent.Action.EXPORT,
        target=f"memory of {user.get_username()} (user {user.pk})",
        data={"items": items},
    )
