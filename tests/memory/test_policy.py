from __future__ import annotations

from agents.memory.models import MemoryItem
from agents.memory.policy import apply_memory
from agents.memory.selectors import retrieve_for_turn
from agents.policies.base import AskingBudget, Situation, SlotSpec, SlotState


def test_a_slot_answered_by_memory_is_marked_as_answered(alice):
    MemoryItem.objects.create(owner=alice, text="Numbered lists", key="lists", value="numbered")
    MemoryItem.objects.create(owner=alice, text="Ask me less", key="asking", value="less")
    situation = Situation(
        request="Draft the agenda",
        slots=(
            SlotState(SlotSpec(name="format", aliases=("lists",), choices=("bullets", "numbered"))),
            SlotState(SlotSpec(name="audience")),
        ),
    )

    updated = apply_memory(
        situation, retrieve_for_turn([alice], None, "agenda"), person_id=alice.pk
    )

    format_slot = updated.slot("format")
    assert format_slot is not None
    assert (format_slot.value, format_slot.source, format_slot.answered) == (
        "numbered",
        "memory",
        True,
    )
    assert [s.name for s in updated.unresolved] == ["audience"]
    assert updated.budget.preference == "less"


def test_a_remembered_value_the_slot_cannot_take_is_not_used(alice):
    MemoryItem.objects.create(owner=alice, text="Prose", key="lists", value="prose")
    situation = Situation(
        request="x", slots=(SlotState(SlotSpec(name="lists", choices=("bullets", "numbered"))),)
    )

    updated = apply_memory(situation, retrieve_for_turn([alice], None, ""), person_id=alice.pk)

    assert not updated.slots[0].answered


def test_an_explicit_budget_preference_wins_over_memory(alice):
    MemoryItem.objects.create(owner=alice, text="Ask me less", key="asking", value="less")
    situation = Situation(request="x", budget=AskingBudget(preference="more"))

    updated = apply_memory(situation, retrieve_for_turn([alice], None, ""), person_id=alice.pk)

    assert updated.budget.preference == "more"
