"""Small builders for constructed situations (no database, no model)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agents.policies.base import (
    AskingBudget,
    AskPreference,
    Interpretation,
    Signals,
    Situation,
    SlotSource,
    SlotSpec,
    SlotState,
)

DESTINATION = SlotSpec(name="destination", type="place", question="Where are you going?")
START = SlotSpec(name="start_date", type="date", label="start date")
BUDGET = SlotSpec(name="budget", type="money", weight=0.6)
PACE = SlotSpec(
    name="pace",
    type="choice",
    required=False,
    choices=("relaxed", "balanced", "packed"),
    default="balanced",
    weight=0.3,
)
TRAVEL_SLOTS = (DESTINATION, START, BUDGET, PACE)


def slot(
    spec: SlotSpec,
    value: str | None = None,
    source: SlotSource | None = None,
    confidence: float = 0.0,
) -> SlotState:
    if value is not None and source is None:
        source = "request"
    if value is not None and not confidence:
        confidence = 0.95
    return SlotState(spec=spec, value=value, source=source, confidence=confidence)


def travel(
    known: Mapping[str, tuple[str, SlotSource]] | None = None,
    *,
    interpretations: Sequence[Mapping[str, str]] = (),
    ambiguity: float | None = None,
    preference: AskPreference = "normal",
    asked_in_episode: int = 0,
    asked_in_session: int = 0,
    timed_out: bool = False,
    changes_in_episode: int = 0,
    request: str = "Plan a trip for me",
) -> Situation:
    """A travel-plan situation where `known` slots are filled, the others unresolved."""
    known = known or {}
    slots = tuple(
        slot(spec, *known[spec.name]) if spec.name in known else slot(spec) for spec in TRAVEL_SLOTS
    )
    return Situation(
        request=request,
        template="travel_plan",
        slots=slots,
        signals=Signals(
            ambiguity=ambiguity,
            interpretations=tuple(
                Interpretation(summary=f"reading {i}", values=dict(v))
                for i, v in enumerate(interpretations)
            ),
        ),
        budget=AskingBudget(
            asked_in_episode=asked_in_episode,
            asked_in_session=asked_in_session,
            preference=preference,
        ),
        timed_out=timed_out,
        changes_in_episode=changes_in_episode,
    )


def fully_specified() -> Situation:
    return travel(
        {
            "destination": ("Lisbon", "request"),
            "start_date": ("2026-05-04", "request"),
            "budget": ("EUR 1500", "request"),
            "pace": ("relaxed", "request"),
        },
        request="Plan a relaxed trip to Lisbon from 4 May 2026 for EUR 1500",
    )


def unspecified() -> Situation:
    return travel(request="Plan a trip")
