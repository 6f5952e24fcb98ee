"""Reads of memory: the permission-checked ones behind the memory page, and retrieval for turns.

Personal memory is visible to its owner only (everyone else gets ``Http404``); team memory to the
workspace's members. Retrieval never returns the personal memory of someone who is not one of
the ``people`` of the turn, nor of anyone who switched memory off.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db.models import Q, QuerySet
from django.http import Http404
from django.utils import timezone

from agents.memory import embeddings, search
from agents.memory.models import (
    MemoryCandidate,
    MemoryHistory,
    MemoryItem,
    MemorySettings,
    Scope,
    Status,
)
from collab.tasks.models import Task
from collab.workspaces.models import Membership, Workspace
from collab.workspaces.selectors import AnyUser, get_membership

# --- The memory page -------------------------------------------------------------------------


def get_item_for_user(user: AnyUser, item_id: int) -> MemoryItem:
    """An item the user may see: their own personal memory, or their workspaces' team memory."""
    if not user.is_authenticated:
        raise Http404("No such memory.")
    item = MemoryItem.objects.select_related("workspace").filter(pk=item_id).first()
    if item is None:
        raise Http404("No such memory.")
    if item.scope == Scope.TEAM:
        assert item.workspace_id is not None
        get_membership(user, item.workspace_id)
    elif item.owner_id != user.pk:
        raise Http404("No such memory.")
    return item


def get_candidate_for_user(user: AnyUser, candidate_id: int) -> MemoryCandidate:
    if not user.is_authenticated:
        raise Http404("No such suggestion.")
    candidate = MemoryCandidate.objects.filter(pk=candidate_id, owner_id=user.pk).first()
    if candidate is None:
        raise Http404("No such suggestion.")
    return candidate


@dataclass
class Section:
    """One block of the memory page: a scope, and for the workspace scopes, one workspace."""

    title: str
    scope: str
    workspace: Workspace | None
    can_edit: bool
    items: list[MemoryItem] = field(default_factory=list)


def visible_items(user: User) -> QuerySet[MemoryItem]:
    """Everything the user may see: own personal items and their workspaces' team items."""
    workspace_ids = Membership.objects.filter(user=user).values("workspace_id")
    return MemoryItem.objects.filter(
        (Q(owner=user) & ~Q(scope=Scope.TEAM))
        | (Q(scope=Scope.TEAM) & Q(workspace_id__in=workspace_ids))
    )


def list_sections(user: User, *, query: str = "") -> list[Section]:
    """The user's current memory grouped by scope (and workspace), optionally searched."""
    memberships = list(
        Membership.objects.filter(user=user)
        .select_related("workspace")
        .order_by("workspace__name", "workspace_id")
    )
    sections: dict[tuple[str, int | None], Section] = {
        (Scope.PERSONAL, None): Section("Everywhere", Scope.PERSONAL, None, True)
    }
    for membership in memberships:
        ws = membership.workspace
        sections[(Scope.WORKSPACE, ws.pk)] = Section(
            f"Only in {ws.name}", Scope.WORKSPACE, ws, True
        )
        sections[(Scope.TEAM, ws.pk)] = Section(
            f"Team memory of {ws.name}", Scope.TEAM, ws, membership.can_edit
        )
    items = visible_items(user).filter(status=Status.ACTIVE).select_related("workspace")
    if query.strip():
        tags = [search.personal_tag(user.pk)]
        for membership in memberships:
            tags += [
                search.workspace_tag(membership.workspace_id, user.pk),
                search.team_tag(membership.workspace_id),
            ]
        ranked = search.search(items, query, limit=200, tags=tags)
        by_id = items.in_bulk([item_id for item_id, _ in ranked])
        found = [by_id[item_id] for item_id, _ in ranked if item_id in by_id]
    else:
        found = list(items.order_by("-pinned", "-confirmed_at", "-id")[:1000])
    for item in found:
        key = (item.scope, item.workspace_id if item.scope != Scope.PERSONAL else None)
        if key in sections:
            sections[key].items.append(item)
    return list(sections.values())


def list_pending_candidates(user: User) -> QuerySet[MemoryCandidate]:
    return (
        MemoryCandidate.objects.filter(owner=user, decision=MemoryCandidate.Decision.PENDING)
        .select_related("workspace")
        .order_by("-created_at", "-id")
    )


def list_history(item: MemoryItem) -> QuerySet[MemoryHistory]:
    return item.history.select_related("actor").order_by("created_at", "id")


def get_settings(user: User) -> MemorySettings:
    return MemorySettings.objects.filter(user=user).first() or MemorySettings(user=user)


def export_memory(user: User) -> dict[str, Any]:
    """The user's own current memory as JSON-ready data (``services.import_memory`` reads it)."""
    items = (
        MemoryItem.objects.filter(owner=user, status=Status.ACTIVE)
        .exclude(scope=Scope.TEAM)
        .order_by("id")
    )
    return {
        "format": "collab-memory",
        "version": 1,
        "exported_at": timezone.now().isoformat(),
        "person": user.get_username(),
        "items": [
            {
                "scope": item.scope,
                "workspace_id": item.workspace_id,
                "kind": item.kind,
                "text": item.text,
                "key": item.key,
                "value": item.value,
                "confidence": item.confidence,
                "pinned": item.pinned,
                "valid_from": item.valid_from.isoformat(),
                "source": item.source_kind,
            }
            for item in items
        ],
    }


# --- Retrieval at turn start -----------------------------------------------------------------

RECENCY_HALF_LIFE_DAYS = search.RECENCY_HALF_LIFE_DAYS
SEARCH_CANDIDATES = 50


def estimate_tokens(text: str) -> int:
    """A cheap, model-independent estimate (about four characters a token)."""
    return max(1, math.ceil(len(text) / 4))


@dataclass(frozen=True)
class RememberedItem:
    """One item handed to a turn, saying whose it is."""

    item_id: int
    whose: str  # "alice", or "team (Acme)"
    person_id: int | None  # None for team memory
    scope: str
    kind: str
    key: str
    value: str
    text: str
    confidence: float
    score: float
    reason: str  # "profile" or "relevant"

    @property
    def line(self) -> str:
        return f"- {self}"

    def __str__(self) -> str:
        structured = f" [{self.key}={self.value}]" if self.key else ""
        label = "team" if self.person_id is None else f"{self.whose}'s"
        return f"({label} {self.kind}) {self.text}{structured}"


@dataclass(frozen=True)
class RetrievedMemory:
    profile: list[RememberedItem]
    relevant: list[RememberedItem]
    tokens: int
    token_budget: int

    @property
    def items(self) -> list[RememberedItem]:
        return [*self.profile, *self.relevant]

    @property
    def item_ids(self) -> list[int]:
        """What the turn log records as "memory used"."""
        return [item.item_id for item in self.items]

    def as_prompt(self) -> str:
        """Prompt text naming whose preference each line is."""
        if not self.items:
            return ""
        return "What we remember about the people here:\n" + "\n".join(
            item.line for item in self.items
        )


def _recency(confirmed_at: datetime, now: datetime) -> float:
    age_days = max(0.0, (now - confirmed_at).total_seconds() / 86400)
    return float(0.5 ** (age_days / RECENCY_HALF_LIFE_DAYS))


def score(*, relevance: float, confidence: float, confirmed_at: datetime, now: datetime) -> float:
    """Relevance (0..1 within one search), weighted by confidence and recency.

    The definition; retrieval computes the same in SQL (``search._ranked``)."""
    return relevance * (0.5 + 0.5 * confidence) * (0.5 + 0.5 * _recency(confirmed_at, now))


_SCOPE_ORDER: dict[str, int] = {Scope.WORKSPACE: 0, Scope.PERSONAL: 1, Scope.TEAM: 2}


def retrieve_for_turn(
    people: Sequence[User],
    workspace: Workspace | None,
    query: str,
    token_budget: int = 400,
    *,
    k: int = 8,
    now: datetime | None = None,
) -> RetrievedMemory:
    """What a turn should know about ``people``: their structured profile first (keyed and
    pinned items, most specific scope winning per key), then the ``k`` items most relevant to
    ``query``, weighted by recency and confidence, all within ``token_budget`` tokens.

    One SQL statement (``search.turn_rows``) reads both the profile and the ranked matches;
    with an embedding model configured, one more reads the candidates' vectors
    (``embeddings.hybrid_rows``) and the query is embedded."""
    now = now or timezone.now()
    names = {p.pk: p.get_username() for p in people}
    whose = search.Whose(
        person_ids=tuple(sorted(names)), workspace_id=workspace.pk if workspace else None
    )
    rows = search.turn_rows(whose, query, now=now, limit=SEARCH_CANDIDATES if k > 0 else 0)
    if k > 0 and embeddings.enabled():  # hybrid: the full-text matches and the nearest in meaning
        relevant_rows = [row for row in rows if row.reason == "relevant"]
        rows = [row for row in rows if row.reason == "profile"] + embeddings.hybrid_rows(
            whose, query, relevant_rows, now=now, limit=SEARCH_CANDIDATES
        )
    team_label = f"team ({workspace.name})" if workspace is not None else "team"
    used = 0

    def remembered(row: search.TurnRow, score_: float, reason: str) -> RememberedItem:
        team = row.scope == Scope.TEAM
        return RememberedItem(
            item_id=row.id,
            whose=team_label if team else names.get(row.owner_id, "someone"),
            person_id=None if team else row.owner_id,
            scope=row.scope,
            kind=row.kind,
            key=row.key,
            value=row.value,
            text=row.text,
            confidence=row.confidence,
            score=round(score_, 6),
            reason=reason,
        )

    profile: list[RememberedItem] = []
    profile_rows = [row for row in rows if row.reason == "profile"]
    profile_rows.sort(key=lambda r: (not r.pinned, _SCOPE_ORDER.get(r.scope, 3), -r.id))
    seen_keys: set[tuple[int | None, str]] = set()
    for row in profile_rows:
        whose_key = (None if row.scope == Scope.TEAM else row.owner_id, row.key)
        if row.key and whose_key in seen_keys:
            continue  # a more specific or pinned item already answers this key
        entry = remembered(row, 1.0, "profile")
        cost = estimate_tokens(entry.line)
        if used + cost > token_budget:
            continue
        used += cost
        profile.append(entry)
        if row.key:
            seen_keys.add(whose_key)

    # Ranked in SQL, best first; profile items (keyed or pinned) are never among them.
    relevant: list[RememberedItem] = []
    for row in rows:
        if row.reason != "relevant":
            continue
        if len(relevant) >= k:
            break
        entry = remembered(row, row.score, "relevant")
        cost = estimate_tokens(entry.line)
        if used + cost > token_budget:
            continue
        used += cost
        relevant.append(entry)
    return RetrievedMemory(
        profile=profile, relevant=relevant, tokens=used, token_budget=token_budget
    )


def list_memory_for_prompt(
    *,
    task: Task,
    user_ids: Sequence[int],
    query: str | None = None,
    token_budget: int = 400,
) -> list[RememberedItem]:
    """The agents app's entry point: what to tell a turn on ``task`` about ``user_ids``.

    Each entry's ``str()`` is its prompt line (saying whose it is); ``item_id`` is what the turn
    log records. Without ``query``, the task's title, goal and latest messages are the query.
    """
    people = list(get_user_model().objects.filter(pk__in=list(user_ids)).order_by("pk"))
    if query is None:
        recent = task.messages.order_by("-id").values_list("body", flat=True)[:3]
        query = " ".join([task.title, task.goal, *recent])
    return retrieve_for_turn(people, task.workspace, query, token_budget).items


# --- Policies --------------------------------------------------------------------------------


def memory_slots(retrieved: RetrievedMemory, *, person_id: int | None = None) -> dict[str, str]:
    """Slot values already answered by memory (``{"lists": "bullets", ...}``).

    With ``person_id``, that person's items win over team memory; without, team memory and then
    every person's items in the order retrieved (the first value of a key wins).
    """
    slots: dict[str, str] = {}
    ordered = sorted(
        (i for i in retrieved.items if i.key),
        key=lambda i: 0 if person_id is not None and i.person_id == person_id else 1,
    )
    for item in ordered:
        if person_id is not None and item.person_id not in (person_id, None):
            continue
        slots.setdefault(item.key, item.value)
    return slots


def asking_preference(retrieved: RetrievedMemory, *, person_id: int | None = None) -> str:
    """``"less"``, ``"more"`` or ``"normal"``: how often this person wants to be asked."""
    value = memory_slots(retrieved, person_id=person_id).get("asking", "normal")
    return value if value in ("less", "more") else "normal"
