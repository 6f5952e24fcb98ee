"""The generic kind: what the skills add for a task of no known kind, read from
``agents/task_templates/_generic.toml`` (data, not code): checklist lines, risks, the rough
effort per part of the goal and what activities imply packing. The parts themselves are the
goal's own clauses (``understand.goal_parts``)."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache

from agents.policies.templates import TEMPLATE_DIR

GENERIC_FILE = TEMPLATE_DIR / "_generic.toml"


@dataclass(frozen=True)
class GenericKind:
    checklist: tuple[str, ...]
    risks: tuple[str, ...]
    per_part_low: float
    per_part_high: float
    unit: str
    basis: str
    # (the words that show an activity, what it implies bringing), for a packing list
    packing: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = ()


@cache
def generic_kind() -> GenericKind:
    with GENERIC_FILE.open("rb") as handle:
        data = tomllib.load(handle)
    effort = data.get("effort", {})
    return GenericKind(
        checklist=tuple(str(x) for x in data.get("checklist", ())),
        risks=tuple(str(x) for x in data.get("risks", ())),
        per_part_low=float(effort.get("per_part_low", 1)),
        per_part_high=float(effort.get("per_part_high", 3)),
        unit=str(effort.get("unit", "hours")),
        basis=str(effort.get("basis", "each part of the work")),
        packing=tuple(
            (tuple(str(c) for c in entry["cues"]), tuple(str(b) for b in entry["bring"]))
            for entry in data.get("packing", ())
        ),
    )
