"""Memory items as data: what the memory store hands the policies (SHARED_CONTRACTS.md).

Django-free and frozen. The memory app fills a list of these into the turn context
(`memory_items`); the policies read only the facts of the person who made the request,
plus facts others explicitly shared that are about the task (never someone's asking
preference). See `facts_for_requester`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

SCOPES = ("workspace", "global", "task")

# Structured keys for the common preference kinds (memory extracts them, asking applies them).
PREFERENCE_KEYS = (
    "spelling",  # british | american
    "list_style",  # bullets | numbered | prose
    "length",  # short | medium | long
    "tone",  # formal | casual | friendly
    "date_format",  # iso | day_month_year | month_day_year
    "number_format",  # a free short description
    "headings",  # yes | no
    "bold_numbers",  # yes | no: the key numbers in bold
    "asking",  # less | more | at_most:N | never
)
SLOT_PREFIX = "slot:"
# Keys that describe how a person wants to be treated: never taken from someone else.
PERSONAL_KEYS = frozenset(PREFERENCE_KEYS)


@dataclass(frozen=True)
class MemoryFact:
    item_id: int | None
    person_id: int | None
    person_name: str
    key: str
    value: str
    scope: str  # "workspace" | "global" | "task"
    kinds: tuple[str, ...] = ()  # template keys it applies to; () = all kinds of work
    text: str = ""
    shared: bool = False

    @property
    def slot_name(self) -> str | None:
        """The slot this fact fills (`slot:duration` -> "duration"), or None."""
        if self.key.startswith(SLOT_PREFIX):
            return self.key[len(SLOT_PREFIX) :].strip() or None
        return None

    def applies_to(self, kind: str | None) -> bool:
        """True when the fact applies to this kind of work (template key)."""
        return not self.kinds or kind is None or kind in self.kinds


def facts_for_requester(
    facts: Iterable[MemoryFact], requester_id: int | None, *, kind: str | None = None
) -> list[MemoryFact]:
    """The facts a policy may read for a request made by `requester_id`.

    The requester's own facts, plus facts other people explicitly shared that are about
    the task (slot values), never another person's preferences (asking, spelling, ...).
    With no known requester only shared task facts are read.
    """
    out: list[MemoryFact] = []
    for fact in facts:
        if not fact.applies_to(kind):
            continue
        own = requester_id is not None and fact.person_id == requester_id
        if own or (fact.shared and fact.key not in PERSONAL_KEYS and fact.slot_name is not None):
            out.append(fact)
    return out
