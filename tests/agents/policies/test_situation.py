from __future__ import annotations

from datetime import date

import pytest

from agents.policies.base import Interpretation, Signals
from agents.policies.signals import ExtractedSlot, SlotExtraction
from agents.policies.situation import asking_preference, build_situation
from agents.policies.templates import get_template

TODAY = date(2026, 3, 2)
TRAVEL = get_template("travel_plan")


def test_the_request_chat_document_and_memory_each_answer_slots():
    situation = build_situation(
        request="Plan my trip to Lisbon",
        template=TRAVEL,
        chat=["We fly out on 4 May"],
        document="# Trip\nBudget: 1200 EUR\n",
        memory=["Prefers a slow pace when travelling"],
        today=TODAY,
    )

    assert {s.name: (s.value, s.source) for s in situation.slots if s.answered} == {
        "destination": ("Lisbon", "request"),
        "start_date": ("2026-05-04", "chat"),
        "budget": ("EUR 1200", "document"),
        "pace": ("relaxed", "memory"),
    }


def test_an_answer_to_the_question_card_beats_the_request():
    situation = build_situation(
        request="Trip to Lisbon, packed schedule",
        template=TRAVEL,
        answers={"pace": "relaxed"},
        today=TODAY,
    )

    pace = situation.slot("pace")
    assert pace is not None
    assert (pace.value, pace.source, pace.confidence) == ("relaxed", "chat", 1.0)


def test_the_newest_chat_message_wins():
    situation = build_situation(
        request="Plan it",
        template=TRAVEL,
        chat=["Let's go to Oslo", "Actually, let's go to Bergen"],
        today=TODAY,
    )

    assert situation.slot("destination").value == "Bergen"  # type: ignore[union-attr]


def test_the_document_answers_only_through_labelled_values():
    situation = build_situation(
        request="Plan it",
        template=TRAVEL,
        document="Last year we went to Paris on 3 June and spent €4000.",
        today=TODAY,
    )

    assert [s.name for s in situation.slots if s.answered] == []


def test_memory_given_as_slot_values_answers_those_slots():
    situation = build_situation(
        request="Plan a trip to Rome",
        template=TRAVEL,
        memory={"budget": "around 800 euros", "travellers": "2"},
        today=TODAY,
    )

    assert situation.slot("budget").value == "EUR 800"  # type: ignore[union-attr]
    assert situation.slot("travelers").source == "memory"  # type: ignore[union-attr]


def test_a_model_extraction_counts_as_stated_only_when_its_evidence_is_in_the_request():
    extraction = SlotExtraction(
        slots=[
            ExtractedSlot(slot="destination", value="Porto", confidence=0.8, evidence="porto"),
            ExtractedSlot(slot="budget", value="EUR 700", confidence=0.6, evidence="cheap"),
        ]
    )

    situation = build_situation(
        request="Somewhere like porto, nothing fancy",
        template=TRAVEL,
        extraction=extraction,
        today=TODAY,
    )

    destination, budget = situation.slot("destination"), situation.slot("budget")
    assert destination is not None
    assert destination.source == "request"
    assert budget is not None
    assert (budget.source, budget.answered) == ("model", False)


def test_a_conflicting_mention_stays_a_guess_so_it_can_be_asked():
    situation = build_situation(
        request="Rome, relaxed or packed, not sure", template=TRAVEL, today=TODAY
    )

    pace = situation.slot("pace")
    assert pace is not None
    assert not pace.answered


def test_a_free_form_task_takes_its_slots_from_the_model():
    situation = build_situation(
        request="Sort out the thing for Friday",
        extraction=SlotExtraction(
            slots=[
                ExtractedSlot(slot="deadline", value="Friday", confidence=0.9, evidence="Friday")
            ]
        ),
        signals=Signals(
            interpretations=(
                Interpretation(summary="a", values={"thing": "report"}),
                Interpretation(summary="b", values={"thing": "party"}),
            )
        ),
        today=TODAY,
    )

    assert situation.template is None
    assert [s.name for s in situation.slots] == ["deadline", "thing"]
    assert situation.slot("deadline").answered  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("memory", "preference"),
    [
        ([], "normal"),
        (["Prefers window seats", "Please ask me fewer questions"], "less"),
        (["Don't ask, just guess"], "less"),
        (["Always ask before changing the intro"], "more"),
        (["Ask me less", "Actually, ask me more about dates"], "more"),
    ],
)
def test_the_asking_preference_is_read_from_memory(memory, preference):
    assert asking_preference(memory) == preference
