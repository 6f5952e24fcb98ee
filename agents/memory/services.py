"""Every change to what agents remember goes through here.

Reconciliation decides what a new proposal does to what is already remembered:

* **add**: nothing similar is remembered yet;
* **supersede**: the same key with another value (``lists=bullets`` after ``lists=prose``): the
  old item is kept with ``valid_to`` and a pointer to its successor;
* **invalidate**: a "forget …" ends matching items (kept with ``valid_to``, status deleted);
* **keep**: already remembered; the item is confirmed (recency, confidence) and any active
  duplicates are merged into it.

Reconciliations for one person are serialised by locking their ``MemorySettings`` row.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from pydantic import BaseModel, ConfigDict, Field
from pydantic import ValidationError as PydanticValidationError

from agents.memory import embeddings
from agents.memory.extractors import Command, Proposal, parse_command
from agents.memory.models import (
    KEY_MAX_CHARS,
    TEXT_MAX_CHARS,
    VALUE_MAX_CHARS,
    Kind,
    MemoryCandidate,
    MemoryHistory,
    MemoryItem,
    MemorySettings,
    ReflectionState,
    ReviewMode,
    Scope,
    Source,
    Status,
)
from collab.audit.models import AuditEvent
from collab.audit.services import record_event
from collab.tasks.models import Message
from collab.workspaces.models import Membership, Workspace

Action = MemoryHistory.Action


@dataclass(frozen=True)
class Provenance:
    """Where a memory came from. Ids are plain integers (no foreign keys to agents tables)."""

    source_kind: str
    task_id: int | None = None
    turn_id: int | None = None
    message_id: int | None = None
    person_id: int | None = None

    def fields(self) -> dict[str, Any]:
        return {
            "source_kind": self.source_kind,
            "source_task_id": self.task_id,
            "source_turn_id": self.turn_id,
            "source_message_id": self.message_id,
            "source_person_id": self.person_id,
        }


@dataclass
class Reconciliation:
    """What a proposal did: ``added``, ``superseded``, ``kept``, ``invalidated``, ``proposed``
    (waiting in the review inbox) or ``ignored`` (memory is off, or nothing to forget)."""

    action: str
    item: MemoryItem | None = None
    changed: list[MemoryItem] = field(default_factory=list)
    candidate: MemoryCandidate | None = None


# --- Settings --------------------------------------------------------------------------------


def settings_for(user: User | int) -> MemorySettings:
    """The person's memory settings (the defaults if they never changed them)."""
    user_id = user if isinstance(user, int) else user.pk
    found = MemorySettings.objects.filter(user_id=user_id).first()
    return found or MemorySettings(user_id=user_id)


def memory_enabled(user: User | int) -> bool:
    return settings_for(user).enabled


def _lock_owner(user_id: int) -> MemorySettings:
    MemorySettings.objects.get_or_create(user_id=user_id)
    return MemorySettings.objects.select_for_update().get(user_id=user_id)


@transaction.atomic
def update_settings(
    *, user: User, enabled: bool, review_mode: str, admin_access_allowed: bool
) -> MemorySettings:
    if review_mode not in ReviewMode.values:
        raise ValidationError({"review_mode": f"Unknown review mode {review_mode!r}."})
    settings = _lock_owner(user.pk)
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


# --- Validation helpers ----------------------------------------------------------------------

_WORDS = re.compile(r"[^\W_]+", re.UNICODE)


def normalise(text: str) -> str:
    return " ".join(_WORDS.findall(text.lower()))


def _similar(a: str, b: str) -> bool:
    """Same words, or nearly (Jaccard ≥ 0.8 over word sets)."""
    wa, wb = set(normalise(a).split()), set(normalise(b).split())
    if not wa or not wb:
        return False
    return wa == wb or len(wa & wb) / len(wa | wb) >= 0.8


def _validate(
    *, text: str, kind: str, key: str, value: str, scope: str, workspace: Workspace | None
) -> tuple[str, str, str]:
    errors: dict[str, str] = {}
    text = " ".join(text.split())
    key = key.strip().lower()
    value = value.strip()
    if not text:
        errors["text"] = "Say what to remember."
    elif len(text) > TEXT_MAX_CHARS:
        errors["text"] = f"Keep it under {TEXT_MAX_CHARS} characters."
    if kind not in Kind.values:
        errors["kind"] = f"Unknown kind {kind!r}."
    if scope not in Scope.values:
        errors["scope"] = f"Unknown scope {scope!r}."
    elif (scope == Scope.PERSONAL) != (workspace is None):
        errors["scope"] = "Personal memory is for everywhere; the others need a workspace."
    if len(key) > KEY_MAX_CHARS or (key and not re.fullmatch(r"[a-z][a-z0-9_]*", key)):
        errors["key"] = "A key is a short lower-case word (letters, digits, underscores)."
    if len(value) > VALUE_MAX_CHARS:
        errors["value"] = f"Keep the value under {VALUE_MAX_CHARS} characters."
    if bool(key) != bool(value):
        errors["value" if key else "key"] = "A key and its value go together."
    if key == "max_words" and value and not value.isdigit():
        errors["value"] = "max_words is a whole number."
    if errors:
        raise ValidationError(errors)
    return text, key, value


#: How sure an agent's ``remember`` is (reflection's model proposals use the same default).
AGENT_CONFIDENCE = 0.6


def check_proposal(
    *, text: str, key: str = "", value: str = "", kind: str = Kind.PREFERENCE
) -> None:
    """``ValidationError`` with reasons if this cannot be remembered (as personal memory)."""
    _validate(text=text, kind=kind, key=key, value=value, scope=Scope.PERSONAL, workspace=None)


def _history(item: MemoryItem, action: str, actor: User | None, note: str = "") -> None:
    MemoryHistory.objects.create(
        item=item, action=action, actor=actor, snapshot=item.snapshot(), note=note[:200]
    )


def _same_place(owner_id: int, scope: str, workspace: Workspace | None) -> QuerySet[MemoryItem]:
    items = MemoryItem.objects.filter(status=Status.ACTIVE, scope=scope, workspace=workspace)
    if scope != Scope.TEAM:
        items = items.filter(owner_id=owner_id)
    return items


def _end(item: MemoryItem, status: str, now: datetime, successor: MemoryItem | None) -> None:
    item.status = status
    item.valid_to = now
    item.superseded_by = successor
    item.save(update_fields=["status", "valid_to", "superseded_by", "updated_at"])


# --- Reconciliation --------------------------------------------------------------------------


def _reconcile_locked(
    *,
    owner_id: int,
    proposal: Proposal,
    scope: str,
    workspace: Workspace | None,
    provenance: Provenance,
    actor: User | None,
) -> Reconciliation:
    now = timezone.now()
    text, key, value = _validate(
        text=proposal.text,
        kind=proposal.kind,
        key=proposal.key,
        value=proposal.value,
        scope=scope,
        workspace=workspace,
    )
    here = _same_place(owner_id, scope, workspace)
    if proposal.forget:
        return _invalidate(here, text=text, key=key, value=value, now=now, actor=actor)

    if key:
        existing = list(here.filter(key=key).order_by("-confirmed_at", "-id"))
    else:
        existing = [
            item
            for item in here.filter(key="").order_by("-confirmed_at", "-id")[:500]
            if _similar(item.text, text)
        ]
    same = [item for item in existing if not key or item.value.lower() == value.lower()]
    if same:
        keep, *duplicates = same
        for duplicate in duplicates:
            _merge(duplicate, into=keep, now=now, actor=actor)
        for other in existing:
            if other not in same:  # an older, different value of the same key
                _end(other, Status.SUPERSEDED, now, keep)
                _history(other, Action.SUPERSEDED, actor, note=f"Replaced by #{keep.pk}")
        keep.times_confirmed += 1
        keep.confirmed_at = now
        keep.confidence = round(min(1.0, max(keep.confidence, proposal.confidence) + 0.05), 3)
        keep.save(update_fields=["times_confirmed", "confirmed_at", "confidence", "updated_at"])
        _history(keep, Action.CONFIRMED, actor, note=provenance.source_kind)
        return Reconciliation("kept", keep, changed=duplicates)

    item = MemoryItem.objects.create(
        owner_id=owner_id,
        scope=scope,
        workspace=workspace,
        kind=proposal.kind,
        text=text,
        key=key,
        value=value,
        confidence=max(0.0, min(1.0, proposal.confidence)),
        valid_from=now,
        confirmed_at=now,
        **provenance.fields(),
    )
    _history(item, Action.CREATED, actor, note=provenance.source_kind)
    embeddings.schedule([item.pk])
    for old in existing:
        _end(old, Status.SUPERSEDED, now, item)
        _history(old, Action.SUPERSEDED, actor, note=f"Replaced by #{item.pk}")
    return Reconciliation("superseded" if existing else "added", item, changed=existing)


def _merge(duplicate: MemoryItem, *, into: MemoryItem, now: datetime, actor: User | None) -> None:
    into.times_confirmed += duplicate.times_confirmed
    into.pinned = into.pinned or duplicate.pinned
    into.save(update_fields=["times_confirmed", "pinned", "updated_at"])
    _end(duplicate, Status.SUPERSEDED, now, into)
    _history(duplicate, Action.MERGED, actor, note=f"Merged into #{into.pk}")


def _invalidate(
    here: QuerySet[MemoryItem],
    *,
    text: str,
    key: str,
    value: str,
    now: datetime,
    actor: User | None,
) -> Reconciliation:
    matches = [
        item
        for item in here.order_by("-confirmed_at", "-id")[:500]
        if (key and item.key == key and item.value.lower() == value.lower())
        or _similar(item.text, text)
        or (normalise(text) and normalise(text) in normalise(item.text))
    ]
    for item in matches:
        _end(item, Status.DELETED, now, None)
        _history(item, Action.INVALIDATED, actor)
    return Reconciliation("invalidated" if matches else "ignored", changed=matches)


@transaction.atomic
def reconcile(
    *,
    owner: User | int,
    proposal: Proposal,
    scope: str = Scope.PERSONAL,
    workspace: Workspace | None = None,
    provenance: Provenance,
    actor: User | None = None,
) -> Reconciliation:
    """Apply one proposal now (no review), unless the owner switched memory off."""
    owner_id = owner if isinstance(owner, int) else owner.pk
    settings = _lock_owner(owner_id)
    if not settings.enabled and provenance.source_kind != Source.MANUAL:
        return Reconciliation("ignored")
    return _reconcile_locked(
        owner_id=owner_id,
        proposal=proposal,
        scope=scope,
        workspace=workspace,
        provenance=provenance,
        actor=actor,
    )


@transaction.atomic
def propose(
    *,
    owner: User | int,
    proposal: Proposal,
    scope: str = Scope.PERSONAL,
    workspace: Workspace | None = None,
    provenance: Provenance,
) -> Reconciliation:
    """What agents and the reflection job call: reconcile now, or queue for the owner's review.

    This is also the service behind an agent's ``remember`` action.
    """
    owner_id = owner if isinstance(owner, int) else owner.pk
    settings = _lock_owner(owner_id)
    if not settings.enabled:
        return Reconciliation("ignored")
    if settings.review_mode == ReviewMode.AUTO:
        return _reconcile_locked(
            owner_id=owner_id,
            proposal=proposal,
            scope=scope,
            workspace=workspace,
            provenance=provenance,
            actor=None,
        )
    text, key, value = _validate(
        text=proposal.text,
        kind=proposal.kind,
        key=proposal.key,
        value=proposal.value,
        scope=scope,
        workspace=workspace,
    )
    pending = MemoryCandidate.objects.filter(
        owner_id=owner_id,
        decision=MemoryCandidate.Decision.PENDING,
        scope=scope,
        workspace=workspace,
        operation="forget" if proposal.forget else "remember",
    )
    for candidate in pending.order_by("-id")[:200]:
        if (key and candidate.key == key and candidate.value == value) or (
            not key and _similar(candidate.text, text)
        ):
            return Reconciliation("proposed", candidate=candidate)
    candidate = MemoryCandidate.objects.create(
        owner_id=owner_id,
        scope=scope,
        workspace=workspace,
        operation="forget" if proposal.forget else "remember",
        kind=proposal.kind,
        text=text,
        key=key,
        value=value,
        confidence=max(0.0, min(1.0, proposal.confidence)),
        **provenance.fields(),
    )
    return Reconciliation("proposed", candidate=candidate)


@transaction.atomic
def accept_candidate(*, user: User, candidate: MemoryCandidate) -> Reconciliation:
    if candidate.owner_id != user.pk:
        raise PermissionDenied("Only the person it is about can accept it.")
    if candidate.decision != MemoryCandidate.Decision.PENDING:
        raise ValidationError("This suggestion was already decided.")
    _lock_owner(user.pk)
    result = _reconcile_locked(
        owner_id=user.pk,
        proposal=Proposal(
            text=candidate.text,
            kind=candidate.kind,
            key=candidate.key,
            value=candidate.value,
            confidence=candidate.confidence,
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
        raise ValidationError("This suggestion was already decided.")
    candidate.decision = MemoryCandidate.Decision.REJECTED
    candidate.decided_at = timezone.now()
    candidate.save(update_fields=["decision", "decided_at"])
    return candidate


# --- Explicit chat commands and reflection scheduling ----------------------------------------


def message_posted(*, message: Message, membership: Membership) -> Reconciliation | None:
    """Called by ``collab.tasks.services.post_message`` inside its transaction.

    Applies an explicit "remember that …" / "forget …" right away (the person said it, so no
    review), and schedules the debounced reflection of the conversation on commit.
    """
    from agents.memory import jobs  # jobs imports this module

    task_id = message.task_id
    transaction.on_commit(lambda: jobs.schedule_reflection(task_id))
    command = parse_command(message.body)
    if command is None or message.author_id is None:
        return None
    result = _apply_command(command, message=message, membership=membership)
    if result is not None:
        message.memory_notice = command_notice(result, forget=command.proposal.forget)  # type: ignore[attr-defined]
    return result


def _apply_command(
    command: Command, *, message: Message, membership: Membership
) -> Reconciliation | None:
    """Reconcile the command's proposal with the author's (or the team's) memory."""
    task_id = message.task_id
    assert message.author_id is not None
    if command.scope == Scope.TEAM and not membership.can_edit:
        return None
    workspace = None if command.scope == Scope.PERSONAL else membership.workspace
    provenance = Provenance(
        source_kind=Source.CHAT_COMMAND,
        task_id=task_id,
        message_id=message.pk,
        person_id=message.author_id,
    )
    if command.proposal.forget and command.scope == Scope.PERSONAL:
        # "forget …" without a scope means anywhere the person's memory applies here.
        result = reconcile(
            owner=message.author_id, proposal=command.proposal, provenance=provenance
        )
        local = reconcile(
            owner=message.author_id,
            proposal=command.proposal,
            scope=Scope.WORKSPACE,
            workspace=membership.workspace,
            provenance=provenance,
        )
        result.changed += local.changed
        if local.changed:
            result.action = "invalidated"
        return result
    return reconcile(
        owner=message.author_id,
        proposal=command.proposal,
        scope=command.scope,
        workspace=workspace,
        provenance=provenance,
    )


def notice_for_author(message: Message) -> str:
    """The sentence ``message_posted`` left on a message it found a command in ("" if none)."""
    return str(getattr(message, "memory_notice", ""))


def command_notice(result: Reconciliation, *, forget: bool) -> str:
    """What an explicit chat command did, in a sentence for the person who said it (and only
    for them: personal memory is theirs alone)."""
    item = result.item
    where = ""
    if item is not None:
        if item.scope == Scope.TEAM:
            where = " in the team's memory"
        elif item.scope == Scope.WORKSPACE:
            where = " for you in this workspace"
        else:
            where = " for you, everywhere"
    if result.action in ("added", "superseded") and item is not None:
        replaced = " (it replaces what was remembered before)" if result.changed else ""
        return f"Remembered{where}: “{item.text}”{replaced}."
    if result.action == "kept" and item is not None:
        return f"Already remembered{where}: “{item.text}”."
    if result.action == "invalidated":
        count = len(result.changed)
        return f"Forgot {count} remembered item{'s' if count != 1 else ''}."
    if result.action == "proposed":
        return "Noted for your review: accept or reject it on your Memory page."
    if forget:
        return "Nothing remembered matched that, so nothing was forgotten."
    return "Nothing was remembered: memory is off for you (your Memory page turns it on)."


def task_finished(*, task_id: int) -> None:
    """Called when a task is marked done: reflect on its conversation without waiting."""
    from agents.memory import jobs

    transaction.on_commit(lambda: jobs.schedule_reflection(task_id, countdown=0))


# --- The memory page -------------------------------------------------------------------------


def _require_can_change(user: User, item: MemoryItem) -> None:
    if item.scope == Scope.TEAM:
        membership = Membership.objects.filter(workspace=item.workspace, user=user).first()
        if membership is None or not membership.can_edit:
            raise PermissionDenied("Only owners and editors change team memory.")
    elif item.owner_id != user.pk:
        raise PermissionDenied("This is someone else's memory.")
    if item.status != Status.ACTIVE:
        raise ValidationError("Only current memories can be changed.")


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
    _lock_owner(user.pk)
    return _reconcile_locked(
        owner_id=user.pk,
        proposal=Proposal(text=text, kind=kind, key=key, value=value, confidence=1.0),
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
    text, key, value = _validate(
        text=text, kind=kind, key=key, value=value, scope=item.scope, workspace=item.workspace
    )
    item.text, item.kind, item.key, item.value = text, kind, key, value
    item.confidence = 1.0  # the person wrote it themselves
    item.confirmed_at = timezone.now()
    item.save()
    _history(item, Action.EDITED, user)
    embeddings.schedule([item.pk])
    return item


@transaction.atomic
def delete_item(*, user: User, item: MemoryItem) -> MemoryItem:
    """Ends the item now (kept in history until "forget everything")."""
    _require_can_change(user, item)
    _end(item, Status.DELETED, timezone.now(), None)
    _history(item, Action.DELETED, user)
    return item


@transaction.atomic
def set_pinned(*, user: User, item: MemoryItem, pinned: bool) -> MemoryItem:
    _require_can_change(user, item)
    if item.pinned != pinned:
        item.pinned = pinned
        item.save(update_fields=["pinned", "updated_at"])
        _history(item, Action.PINNED if pinned else Action.UNPINNED, user)
    return item


@transaction.atomic
def forget_everything(*, user: User) -> dict[str, int]:
    """Hard-deletes the person's own memory (items, their history, suggestions).

    Team memory they wrote stays: it belongs to the workspace. The audit row keeps counts only.
    """
    _lock_owner(user.pk)
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
def record_admin_read(*, admin: User, subject: User) -> AuditEvent:
    """Admins may read someone's memory only if that person allowed it; every read is audited."""
    if not (admin.is_staff and settings_for(subject).admin_access_allowed):
        raise PermissionDenied("This person has not allowed admins to read their memory.")
    return record_event(
        actor=admin,
        action=AuditEvent.Action.MEMORY_ADMIN_ACCESS,
        target=f"memory of {subject.get_username()} (user {subject.pk})",
        data={"subject_user_id": subject.pk},
    )


@transaction.atomic
def record_export(*, user: User, items: int) -> AuditEvent:
    return record_event(
        actor=user,
        action=AuditEvent.Action.EXPORT,
        target=f"memory of {user.get_username()} (user {user.pk})",
        data={"items": items},
    )


# --- Reflection bookkeeping (used by jobs.reflect_conversation_job) -------------------------


@transaction.atomic
def apply_reflection(
    *,
    task_id: int,
    read_from_message_id: int,
    read_to_message_id: int,
    proposals: Iterable[tuple[int, Proposal, Provenance]],
) -> list[Reconciliation] | None:
    """Record one reflection pass; ``None`` if another pass already read these messages."""
    state, _ = ReflectionState.objects.get_or_create(task_id=task_id)
    state = ReflectionState.objects.select_for_update().get(task_id=task_id)
    if state.last_message_id != read_from_message_id:
        return None
    results = [
        propose(owner=owner_id, proposal=proposal, provenance=provenance)
        for owner_id, proposal, provenance in proposals
    ]
    state.last_message_id = read_to_message_id
    state.reflected_at = timezone.now()
    state.save()
    return results


# --- Import ----------------------------------------------------------------------------------

EXPORT_FORMAT = "collab-memory"
IMPORT_MAX_ITEMS = 2000


class _ImportedItem(BaseModel):
    model_config = ConfigDict(extra="ignore")

    scope: Literal["personal", "workspace"] = "personal"
    workspace_id: int | None = None
    kind: Literal["preference", "fact", "instruction"] = "preference"
    text: str = Field(min_length=1, max_length=TEXT_MAX_CHARS)
    key: str = Field("", max_length=KEY_MAX_CHARS)
    value: str = Field("", max_length=VALUE_MAX_CHARS)
    confidence: float = Field(0.8, ge=0, le=1)
    pinned: bool = False


class _ImportFile(BaseModel):
    model_config = ConfigDict(extra="ignore")

    format: Literal["collab-memory"]
    version: Literal[1]
    items: list[_ImportedItem] = Field(max_length=IMPORT_MAX_ITEMS)


def parse_import(raw: bytes) -> list[_ImportedItem]:
    """Validates an export file; ``ValidationError`` lists what is wrong."""
    try:
        parsed = _ImportFile.model_validate_json(raw)
    except PydanticValidationError as exc:
        reasons = [
            f"{'.'.join(str(p) for p in error['loc']) or 'file'}: {error['msg']}"
            for error in exc.errors()[:10]
        ]
        raise ValidationError(reasons) from None
    return parsed.items


@transaction.atomic
def import_memory(*, user: User, raw: bytes) -> dict[str, int]:
    """Adds the file's items to the person's memory, reconciling like any other source."""
    items = parse_import(raw)
    workspace_ids = {i.workspace_id for i in items if i.workspace_id is not None}
    workspaces = Workspace.objects.in_bulk(
        Membership.objects.filter(user=user, workspace_id__in=workspace_ids).values_list(
            "workspace_id", flat=True
        )
    )
    errors = []
    for index, entry in enumerate(items):
        if entry.scope == "workspace" and entry.workspace_id not in workspaces:
            errors.append(f"items.{index}.workspace_id: not a workspace you belong to")
        if entry.scope == "personal" and entry.workspace_id is not None:
            errors.append(f"items.{index}.workspace_id: personal items have no workspace")
    if errors:
        raise ValidationError(errors[:10])
    _lock_owner(user.pk)
    counts = {"added": 0, "superseded": 0, "kept": 0}
    for entry in items:
        try:
            result = _reconcile_locked(
                owner_id=user.pk,
                proposal=Proposal(
                    text=entry.text,
                    kind=entry.kind,
                    key=entry.key,
                    value=entry.value,
                    confidence=entry.confidence,
                ),
                scope=entry.scope,
                workspace=(
                    workspaces[entry.workspace_id] if entry.workspace_id is not None else None
                ),
                provenance=Provenance(source_kind=Source.IMPORT, person_id=user.pk),
                actor=user,
            )
        except ValidationError as exc:
            raise ValidationError([f"{entry.text[:40]!r}: {m}" for m in exc.messages]) from None
        counts[result.action] = counts.get(result.action, 0) + 1
        if entry.pinned and result.item is not None and not result.item.pinned:
            result.item.pinned = True
            result.item.save(update_fields=["pinned", "updated_at"])
    return counts
