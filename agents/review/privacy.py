"""What review pages and exports may show of people's personal memory.

Team memory belongs to the workspace and is always shown. Personal memory (scope personal or
workspace) is the person's own: review pages show only that it changed; exports carry it only
when the workspace allows it AND the person allowed admins to read their memory; a turn's trace
shows another person's unshared items only to staff the person allowed (``trace_memory_for``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser

from agents.memory.models import MemorySettings, Scope
from agents.review.models import ReviewSettings

MEMORY_WITHHELD = "[personal memory withheld]"


def exportable_memory_owners(settings: ReviewSettings, owner_ids: Iterable[int]) -> set[int]:
    """The people whose personal memory this workspace's exports may include."""
    if not settings.export_personal_memory:
        return set()
    return set(
        MemorySettings.objects.filter(
            user_id__in=set(owner_ids), admin_access_allowed=True
        ).values_list("user_id", flat=True)
    )


def is_personal(scope: str) -> bool:
    return scope != Scope.TEAM


def redact_memory_lines(text: str, lines: Iterable[str]) -> str:
    """Withhold the personal memory lines a prompt showed (team lines are kept), and their
    text without its "(whose kind)" label, as a model's response may echo it."""
    for line in lines:
        if line and not line.startswith("(team"):
            text = text.replace(line, MEMORY_WITHHELD)
            bare = line.split(") ", 1)[1] if line.startswith("(") and ") " in line else ""
            if bare.strip():
                text = text.replace(bare, MEMORY_WITHHELD)
    return text


@dataclass(frozen=True)
class TraceMemory:
    """What one viewer may see of the memory a turn was given (``Turn.context``).

    ``withheld``: the prompt lines and item texts to withhold (other people's unshared
    personal items); ``withheld_ids``: those items' ids; ``read_of``: the people whose unshared
    items a staff member is shown because they allowed admins to read their memory (each such
    read is audited, ``agents.memory.services.record_admin_read``)."""

    withheld: tuple[str, ...] = ()
    withheld_ids: frozenset[int] = frozenset()
    read_of: frozenset[int] = frozenset()


def _paired_items(context: Mapping[str, Any]) -> list[tuple[str, Mapping[str, Any] | None]]:
    """Each prompt line with the item it was made from: ``memory`` and ``memory_items`` are
    written in the same order (``RetrievedMemory.items``); an older context without items
    pairs every line with ``None``."""
    lines = [str(line) for line in context.get("memory", []) or []]
    items = [i for i in context.get("memory_items", []) or [] if isinstance(i, Mapping)]
    if len(items) != len(lines):
        return [(line, None) for line in lines] + [("", item) for item in items]
    return list(zip(lines, items, strict=True))


def trace_memory_for(context: Any, viewer: AbstractBaseUser) -> TraceMemory:
    """Withhold every unshared personal item from everyone but its owner, staff included;
    staff see (and are recorded reading) the items of the people who allowed admin access.
    Team memory and items their owners shared with their workspaces stay (a reply others read
    may use them). A line without its item is withheld unless its label names the team or the
    viewer."""
    if not isinstance(context, Mapping):
        return TraceMemory()
    own_label = f"({viewer.get_username()}'s "
    pairs = _paired_items(context)
    hidden: dict[int, list[tuple[str, Mapping[str, Any]]]] = {}
    unknown: list[str] = []
    for line, item in pairs:
        if item is None:
            if line and not line.startswith("(team") and not line.startswith(own_label):
                unknown.append(line)
            continue
        owner = item.get("person_id")
        if owner is None or item.get("shared") or owner == viewer.pk:
            continue
        hidden.setdefault(int(owner), []).append((line, item))
    readable: set[int] = set()
    if hidden and getattr(viewer, "is_staff", False):
        readable = set(
            MemorySettings.objects.filter(
                user_id__in=hidden, admin_access_allowed=True
            ).values_list("user_id", flat=True)
        )
    withheld: list[str] = list(unknown)
    ids: set[int] = set()
    for owner, entries in hidden.items():
        if owner in readable:
            continue
        for line, item in entries:
            withheld.extend(text for text in (line, str(item.get("text") or "")) if text)
            if isinstance(item.get("item_id"), int):
                ids.add(item["item_id"])
    # Longest first: an item's text is part of its line.
    withheld.sort(key=len, reverse=True)
    return TraceMemory(tuple(withheld), frozenset(ids), frozenset(readable))


def redact_memory_data(value: Any, memory: TraceMemory) -> Any:
    """``value`` (JSON data: a turn's context, inputs, decision; a call's messages) with the
    withheld memory replaced in every string, and each withheld item of a ``memory_items``
    list reduced to whose it is."""
    if not memory.withheld:
        return value
    if isinstance(value, str):
        return redact_memory_lines(value, memory.withheld)
    if isinstance(value, list):
        return [redact_memory_data(v, memory) for v in value]
    if isinstance(value, dict):
        item_id = value.get("item_id")
        if isinstance(item_id, int) and item_id in memory.withheld_ids and "person_id" in value:
            return {
                "item_id": value["item_id"],
                "person_id": value["person_id"],
                "person_name": value.get("person_name", ""),
                "text": MEMORY_WITHHELD,
            }
        return {key: redact_memory_data(v, memory) for key, v in value.items()}
    return value
