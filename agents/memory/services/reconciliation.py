"""Reconciliation: what a new proposal does to what is already remembered.

* **add**: nothing similar is remembered yet;
* **supersede**: the same key (for the same kinds of work) with another value
  (``list_style=bullets`` after ``list_style=prose``): the old item is kept with ``valid_to``
  and a pointer to its successor;
* **invalidate**: a "forget …" ends matching items (kept with ``valid_to``, status deleted);
* **keep**: already remembered; the item is confirmed (recency, confidence) and any active
  duplicates are merged into it.

Reconciliations for one person are serialised by locking their ``MemorySettings`` row.
What agents and reflection propose goes through ``propose`` (the person's review mode decides);
an agent's proposal about anyone but the person who asked always waits in that person's inbox
(``propose_from_agent``).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from agents.memory import embeddings
from agents.memory.extractors import KEY_VALUES, Proposal, key_problem
from agents.memory.models import (
    KEY_MAX_CHARS,
    KINDS_MAX_CHARS,
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
from collab.workspaces.models import Workspace

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


def lock_owner(user_id: int) -> MemorySettings:
    MemorySettings.objects.get_or_create(user_id=user_id)
    return MemorySettings.objects.select_for_update().get(user_id=user_id)


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


def validate(
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
    if key == "asking" or key in KEY_VALUES:
        value = value.lower()
    if len(key) > KEY_MAX_CHARS:
        errors["key"] = f"Keep the key under {KEY_MAX_CHARS} characters."
    if len(value) > VALUE_MAX_CHARS:
        errors["value"] = f"Keep the value under {VALUE_MAX_CHARS} characters."
    problem = key_problem(key, value) if key and "key" not in errors else None
    if problem is not None and problem.startswith("A key"):
        errors["key"] = problem
    elif bool(key) != bool(value):
        errors["value" if key else "key"] = "A key and its value go together."
    elif problem is not None:
        errors["value"] = problem
    if errors:
        raise ValidationError(errors)
    return text, key, value


def _validated(
    proposal: Proposal, scope: str, workspace: Workspace | None
) -> tuple[str, str, str, str]:
    """``proposal``'s text, key and value as ``validate`` cleans them, and its kinds of work."""
    text, key, value = validate(
        text=proposal.text,
        kind=proposal.kind,
        key=proposal.key,
        value=proposal.value,
        scope=scope,
        workspace=workspace,
    )
    return text, key, value, clean_kinds(proposal.kinds)


def check_proposal(
    *, text: str, key: str = "", value: str = "", kind: str = Kind.PREFERENCE
) -> None:
    """``ValidationError`` with reasons if this cannot be remembered (as personal memory)."""
    validate(text=text, kind=kind, key=key, value=value, scope=Scope.PERSONAL, workspace=None)


def clean_kinds(kinds: Iterable[str]) -> str:
    """The stored form of the kinds of work an item applies to (sorted, space-separated)."""
    cleaned = sorted(
        {k.strip().lower() for k in kinds if re.fullmatch(r"[a-z][a-z0-9_]*", k.strip().lower())}
    )
    return " ".join(cleaned)[:KINDS_MAX_CHARS]


def record_history(item: MemoryItem, action: str, actor: User | None, note: str = "") -> None:
    MemoryHistory.objects.create(
        item=item, action=action, actor=actor, snapshot=item.snapshot(), note=note[:200]
    )


def _same_place(owner_id: int, scope: str, workspace: Workspace | None) -> QuerySet[MemoryItem]:
    items = MemoryItem.objects.filter(status=Status.ACTIVE, scope=scope, workspace=workspace)
    if scope != Scope.TEAM:
        items = items.filter(owner_id=owner_id)
    return items


def end_item(item: MemoryItem, status: str, now: datetime, successor: MemoryItem | None) -> None:
    item.status = status
    item.valid_to = now
    item.superseded_by = successor
    item.save(update_fields=["status", "valid_to", "superseded_by", "updated_at"])


# --- Reconciliation --------------------------------------------------------------------------


def reconcile_locked(
    *,
    owner_id: int,
    proposal: Proposal,
    scope: str,
    workspace: Workspace | None,
    provenance: Provenance,
    actor: User | None,
) -> Reconciliation:
    now = timezone.now()
    text, key, value, kinds = _validated(proposal, scope, workspace)
    here = _same_place(owner_id, scope, workspace)
    if proposal.forget:
        return _invalidate(here, text=text, key=key, value=value, now=now, actor=actor)

    if key:
        # The same key for other kinds of work is another preference, not an older value.
        existing = list(here.filter(key=key, kinds=kinds).order_by("-confirmed_at", "-id"))
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
                end_item(other, Status.SUPERSEDED, now, keep)
                record_history(other, Action.SUPERSEDED, actor, note=f"Replaced by #{keep.pk}")
        keep.times_confirmed += 1
        keep.confirmed_at = now
        keep.confidence = round(min(1.0, max(keep.confidence, proposal.confidence) + 0.05), 3)
        keep.save(update_fields=["times_confirmed", "confirmed_at", "confidence", "updated_at"])
        record_history(keep, Action.CONFIRMED, actor, note=provenance.source_kind)
        return Reconciliation("kept", keep, changed=duplicates)

    item = MemoryItem.objects.create(
        owner_id=owner_id,
        scope=scope,
        workspace=workspace,
        kind=proposal.kind,
        text=text,
        key=key,
        value=value,
        kinds=kinds,
        confidence=max(0.0, min(1.0, proposal.confidence)),
        valid_from=now,
        confirmed_at=now,
        **provenance.fields(),
    )
    record_history(item, Action.CREATED, actor, note=provenance.source_kind)
    embeddings.schedule([item.pk])
    for old in existing:
        end_item(old, Status.SUPERSEDED, now, item)
        record_history(old, Action.SUPERSEDED, actor, note=f"Replaced by #{item.pk}")
    return Reconciliation("superseded" if existing else "added", item, changed=existing)


def _merge(duplicate: MemoryItem, *, into: MemoryItem, now: datetime, actor: User | None) -> None:
    into.times_confirmed += duplicate.times_confirmed
    into.pinned = into.pinned or duplicate.pinned
    into.save(update_fields=["times_confirmed", "pinned", "updated_at"])
    end_item(duplicate, Status.SUPERSEDED, now, into)
    record_history(duplicate, Action.MERGED, actor, note=f"Merged into #{into.pk}")


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
        end_item(item, Status.DELETED, now, None)
        record_history(item, Action.INVALIDATED, actor)
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
    settings = lock_owner(owner_id)
    if not settings.enabled and provenance.source_kind != Source.MANUAL:
        return Reconciliation("ignored")
    return reconcile_locked(
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
    review: bool = False,
) -> Reconciliation:
    """What agents and the reflection job call: reconcile now, or queue for the owner's review
    (their review mode says which; ``review=True`` always queues)."""
    owner_id = owner if isinstance(owner, int) else owner.pk
    settings = lock_owner(owner_id)
    if not settings.enabled:
        return Reconciliation("ignored")
    if settings.review_mode == ReviewMode.AUTO and not review:
        return reconcile_locked(
            owner_id=owner_id,
            proposal=proposal,
            scope=scope,
            workspace=workspace,
            provenance=provenance,
            actor=None,
        )
    text, key, value, kinds = _validated(proposal, scope, workspace)
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
        kinds=kinds,
        confidence=max(0.0, min(1.0, proposal.confidence)),
        **provenance.fields(),
    )
    return Reconciliation("proposed", candidate=candidate)


#: How sure an agent's ``remember`` is (reflection's model proposals use the same default).
AGENT_CONFIDENCE = 0.6


def propose_from_agent(
    *,
    subject: User | int,
    requested_by: User | int | None,
    workspace: Workspace,
    proposal: Proposal,
    provenance: Provenance,
) -> Reconciliation:
    """An agent's ``remember`` (the one way agents write memory).

    Whatever the model asked for, the item is kept only in ``workspace`` (the turn's), for
    ``subject`` only. It is reconciled at once only if ``subject`` is the person who asked for
    the turn and their review mode is automatic; about anyone else (a hijacked turn, a
    document that names people) it always waits in ``subject``'s review inbox. Memory off:
    ignored.
    """
    subject_id = subject if isinstance(subject, int) else subject.pk
    requester_id = (
        requested_by if requested_by is None or isinstance(requested_by, int) else requested_by.pk
    )
    return propose(
        owner=subject_id,
        proposal=proposal,
        scope=Scope.WORKSPACE,
        workspace=workspace,
        provenance=provenance,
        review=subject_id != requester_id,
    )


# --- Reflection bookkeeping (used by jobs.reflect_conversation_job) -------------------------


@transaction.atomic
def apply_reflection(
    *,
    task_id: int,
    workspace: Workspace,
    read_from_message_id: int,
    read_to_message_id: int,
    proposals: Iterable[tuple[int, Proposal, Provenance]],
) -> list[Reconciliation] | None:
    """Record one reflection pass; ``None`` if another pass already read these messages.

    What reflection notices is kept in the task's workspace only (the person may widen it)."""
    state, _ = ReflectionState.objects.get_or_create(task_id=task_id)
    state = ReflectionState.objects.select_for_update().get(task_id=task_id)
    if state.last_message_id != read_from_message_id:
        return None
    results = [
        propose(
            owner=owner_id,
            proposal=proposal,
            scope=Scope.WORKSPACE,
            workspace=workspace,
            provenance=provenance,
        )
        for owner_id, proposal, provenance in proposals
    ]
    state.last_message_id = read_to_message_id
    state.reflected_at = timezone.now()
    state.save()
    return results
