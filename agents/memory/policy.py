"""Memory into clarification policies: slots already answered by memory, and "ask me less".

Pure mapping from a turn's ``RetrievedMemory`` onto the policies' ``Situation``; the agents app
calls ``apply_memory`` while it builds the situation for a turn.
"""

from __future__ import annotations

from dataclasses import replace

from agents.memory.selectors import RetrievedMemory, asking_preference, memory_slots
from agents.policies.base import AskPreference, Situation, SlotState


def _matching_choice(slot: SlotState, value: str) -> str | None:
    """The slot's own spelling of ``value``, or ``None`` if the slot cannot take it."""
    spec = slot.spec
    if not spec.choices:
        return value
    lowered = value.lower()
    for choice in spec.choices:
        words = (choice, *spec.choice_aliases.get(choice, ()))
        if lowered in (w.lower() for w in words):
            return choice
    return None


def answer_slots(
    slots: tuple[SlotState, ...], retrieved: RetrievedMemory, *, person_id: int | None = None
) -> tuple[SlotState, ...]:
    """Fills each slot not yet answered whose name (or an alias) is a remembered key."""
    remembered = memory_slots(retrieved, person_id=person_id)
    confidence = {i.key: i.confidence for i in retrieved.items if i.key}
    filled = []
    for slot in slots:
        if not slot.answered:
            for name in (slot.spec.name, *slot.spec.aliases):
                if name in remembered:
                    value = _matching_choice(slot, remembered[name])
                    if value is not None:
                        slot = replace(
                            slot,
                            value=value,
                            source="memory",
                            confidence=confidence.get(name, 0.8),
                        )
                        break
        filled.append(slot)
    return tuple(filled)


def apply_memory(
    situation: Situation, retrieved: RetrievedMemory, *, person_id: int | None = None
) -> Situation:
    """The situation with memory's answers filled in and the person's asking preference set."""
    preference: AskPreference = "normal"
    remembered = asking_preference(retrieved, person_id=person_id)
    if remembered == "less":
        preference = "less"
    elif remembered == "more":
        preference = "more"
    budget = situation.budget
    if budget.preference == "normal":  # an explicit setting on the budget wins over memory
        budget = replace(budget, preference=preference)
    return replace(
        situation,
        slots=answer_slots(situation.slots, retrieved, person_id=person_id),
        budget=budget,
    )
