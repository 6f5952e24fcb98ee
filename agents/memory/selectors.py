"""Reads of memory: the permission-checked ones behind the memory page, and retrieval for turns.

Personal memory is visible to its owner only (everyone else gets ``Http404``); team memory to the
workspace's members. Retrieval never returns the personal memory of someone who is not one of
the ``people`` of the turn, nor of anyone who switched memory off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.contrib.auth.models import User
from django.db.models import Q, QuerySet
from django.http import Http404
from django.urls import reverse
from django.utils import timezone

from agents.memory import embeddings, scoring, search
from agents.memory.models import (
    MemoryCandidate,
    MemoryHistory,
    MemoryItem,
    MemorySettings,
    Scope,
    Status,
)
from agents.models import Action
from agents.policies.memory_facts import MemoryFact
from agents.policies.tokens import estimate_tokens
from collab.workspaces.models import Membership, Workspace
from collab.workspaces.selectors import AnyUser, get_membership


class Unset:
    """The type of ``UNSET``: an argument left out (``None`` means something else)."""


UNSET = Unset()

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

SEARCH_CANDIDATES = 50

#: ``MemoryFact.scope`` of each stored scope (team memory is the workspace's, no person's).
FACT_SCOPE: dict[str, str] = {
    Scope.PERSONAL: "global",
    Scope.WORKSPACE: "workspace",
    Scope.TEAM: "workspace",
}


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
    kinds: tuple[str, ...] = ()
    shared: bool = False

    @property
    def line(self) -> str:
        return f"- {self}"

    def __str__(self) -> str:
        structured = f" [{self.key}={self.value}]" if self.key else ""
        label = "team" if self.person_id is None else f"{self.whose}'s"
        applies = f" (for {', '.join(self.kinds)})" if self.kinds else ""
        return f"({label} {self.kind}) {self.text}{structured}{applies}"

    def fact(self) -> MemoryFact:
        """The item as the policies read it (``agents.policies.memory_facts``)."""
        return MemoryFact(
            item_id=self.item_id,
            person_id=self.person_id,
            person_name=self.whose,
            key=self.key,
            value=self.value,
            scope=FACT_SCOPE.get(self.scope, "workspace"),
            kinds=self.kinds,
            text=self.text,
            shared=self.shared or self.person_id is None,
        )


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

    @property
    def facts(self) -> list[MemoryFact]:
        """What the turn context carries as ``memory_items``."""
        return [item.fact() for item in self.items]

    def as_prompt(self) -> str:
        """Prompt text naming whose preference each line is."""
        if not self.items:
            return ""
        return "What we remember about the people here:\n" + "\n".join(
            item.line for item in self.items
        )


def score(*, relevance: float, confidence: float, confirmed_at: datetime, now: datetime) -> float:
    """Relevance (0..1 within one search), weighted by confidence and recency
    (``scoring``: the one definition, which the SQL path is built from too)."""
    return scoring.score(
        relevance=relevance, confidence=confidence, confirmed_at=confirmed_at, now=now
    )


_SCOPE_ORDER: dict[str, int] = {Scope.WORKSPACE: 0, Scope.PERSONAL: 1, Scope.TEAM: 2}


def retrieve_for_turn(
    people: Sequence[User],
    workspace: Workspace | None,
    query: str,
    token_budget: int = 400,
    *,
    requester_id: int | Unset | None = UNSET,
    k: int = 8,
    now: datetime | None = None,
) -> RetrievedMemory:
    """What a turn should know about ``people``: their structured profile first (keyed and
    pinned items, most specific scope winning per key), then the ``k`` items most relevant to
    ``query``, weighted by recency and confidence, all within ``token_budget`` tokens.

    ``requester_id``: the person the turn answers. Its output is read by everyone on the task,
    so only the requester's own unshared items are read; the other people's personal items
    only where they chose "share with my workspaces" (``None``: nobody's unshared items).
    Leaving it out reads everyone's (the person's own Memory page views, benchmarks).

    One SQL statement (``search.turn_rows``) reads both the profile and the ranked matches;
    with an embedding model configured, one more reads the candidates' vectors
    (``embeddings.hybrid_rows``) and the query is embedded."""
    now = now or timezone.now()
    names = {p.pk: p.get_username() for p in people}
    private: tuple[int, ...] | None = None
    if not isinstance(requester_id, Unset):
        private = () if requester_id is None else (requester_id,)
    whose = search.Whose(
        person_ids=tuple(sorted(names)),
        workspace_id=workspace.pk if workspace else None,
        private_ids=private,
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
            kinds=tuple(row.kinds.split()),
            shared=row.shared,
        )

    profile: list[RememberedItem] = []
    profile_rows = [row for row in rows if row.reason == "profile"]
    profile_rows.sort(key=lambda r: (not r.pinned, _SCOPE_ORDER.get(r.scope, 3), -r.id))
    seen_keys: set[tuple[int | None, str, str]] = set()
    for row in profile_rows:
        whose_key = (None if row.scope == Scope.TEAM else row.owner_id, row.key, row.kinds)
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


# --- What a reply used (chips beside agents' messages) ----------------------------------------


def attach_memory_used(task_id: int, messages: list[dict[str, Any]], viewer: AnyUser) -> None:
    """Give each agent message the viewer's own remembered items its turn used
    (``message["memory_used"]``: id, text, url), in two queries. Nobody sees anyone else's
    items here, team memory included: these chips say "this is what it used of *yours*"."""
    agent_ids = [m["id"] for m in messages if m.get("kind") == "agent"]
    if not agent_ids or not viewer.is_authenticated:
        return
    used_by_message: dict[int, list[int]] = {}
    rows = Action.objects.filter(
        turn__task_id=task_id, result__message_id__in=agent_ids
    ).values_list("result__message_id", "turn__context__memory_item_ids")
    for message_id, item_ids in rows:
        if isinstance(message_id, int) and isinstance(item_ids, list):
            used_by_message.setdefault(message_id, []).extend(
                i for i in item_ids if isinstance(i, int)
            )
    wanted = {i for ids in used_by_message.values() for i in ids}
    if not wanted:
        return
    mine = dict(
        MemoryItem.objects.filter(pk__in=wanted, owner_id=viewer.pk)
        .exclude(scope=Scope.TEAM)
        .values_list("pk", "text")
    )
    for message in messages:
        chips = [
            _chip(pk, mine[pk])
            for pk in dict.fromkeys(used_by_message.get(message["id"], ()))
            if pk in mine
        ]
        if chips:
            message["memory_used"] = chips


def _chip(item_id: int, text: str) -> dict[str, Any]:
    return {"id": item_id, "text": text, "url": reverse("memory:item", args=[item_id])}


def memory_used_by_owner(item_ids: Sequence[Any]) -> dict[int, list[dict[str, Any]]]:
    """The chips of an agent's new message for each person whose own items its turn used
    (owner id -> chips, in the turn's order), as ``attach_memory_used`` gives each viewer on a
    reload: the live message shows each person theirs, nobody anyone else's, team memory
    nobody's. One query."""
    ids = list(dict.fromkeys(i for i in item_ids if isinstance(i, int)))
    if not ids:
        return {}
    rows = {
        pk: (owner_id, text)
        for pk, owner_id, text in MemoryItem.objects.filter(pk__in=ids, owner_id__isnull=False)
        .exclude(scope=Scope.TEAM)
        .values_list("pk", "owner_id", "text")
    }
    chips: dict[int, list[dict[str, Any]]] = {}
    for pk in ids:
        if pk in rows:
            owner_id, text = rows[pk]
            chips.setdefault(owner_id, []).append(_chip(pk, text))
    return chips
