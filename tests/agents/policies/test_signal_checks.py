"""Model signals can only help: what contradicts a sure detector reading is ignored and said."""

from __future__ import annotations

import math
from datetime import date

from agents.policies import get_policy
from agents.policies.base import Interpretation, Signals, Situation
from agents.policies.signal_checks import screen_signals
from agents.policies.signals import ExtractedSlot, SlotExtraction
from agents.policies.situation import build_situation
from agents.policies.templates import get_template

TODAY = date(2026, 3, 2)
TRAVEL = get_template("travel_plan")
# The dates and the budget are read with confidence >= 0.8; travelers and pace are not stated.
REQUEST = "Plan a trip to Zürich from 4 May 2026 to 9 May 2026, budget 1 200 CHF."


def situation(signals: Signals, extraction: SlotExtraction | None = None) -> Situation:
    return build_situation(
        request=REQUEST, template=TRAVEL, signals=signals, extraction=extraction, today=TODAY
    )


def test_a_slot_the_judge_calls_unclear_is_dropped_when_the_detectors_read_it_plainly():
    rating = Signals(ambiguity=0.9, unclear_slots=("budget", "travelers"))

    result = situation(rating)

    assert result.signals.ambiguity == 0.9
    assert result.signals.unclear_slots == ("travelers",)
    assert result.ignored_signals == (
        "ambiguity: the model called budget unclear, the detectors read CHF 1200",
    )


def test_a_rating_about_nothing_the_detectors_left_open_is_ignored_altogether():
    rating = Signals(
        ambiguity=0.95,
        ambiguity_reason="the budget is unclear",
        unclear_slots=("budget", "start date"),
        suggested_question="What is your budget?",
    )

    result = situation(rating)

    assert result.signals.ambiguity is None
    assert result.signals.unclear_slots == ()
    assert result.signals.suggested_question == ""
    assert result.ignored_signals[-1] == (
        "ambiguity rating 0.95: every slot it named is stated plainly"
    )


def test_the_judge_cannot_make_the_agent_ask_about_what_the_request_states():
    rating = Signals(ambiguity=0.95, unclear_slots=("budget",), suggested_question="Budget?")

    decision = get_policy("llm_judge").decide(situation(rating))

    assert decision.action == "act"
    assert "budget" not in decision.ask_slots


def test_a_rating_that_is_not_a_number_in_range_is_ignored():
    for value in (math.nan, 1.7, -0.2):
        result = situation(Signals(ambiguity=value))

        assert result.signals.ambiguity is None
        assert "not a number in [0, 1]" in result.ignored_signals[0]


def test_a_rating_naming_an_open_slot_is_kept_whole():
    rating = Signals(ambiguity=0.8, unclear_slots=("travelers",))

    result = situation(rating)

    assert result.signals == rating
    assert result.ignored_signals == ()


def test_a_sampled_reading_that_contradicts_the_request_loses_that_value_only():
    readings = (
        # the same amount in other words, and a date in words the parser does not read: kept
        Interpretation(
            summary="a", values={"budget": "CHF 1'200", "start_date": "4 mai", "travelers": "2"}
        ),
        Interpretation(
            summary="b", values={"budget": "1.500,00 €", "start_date": "May 4th", "travelers": "3"}
        ),
    )

    result = situation(Signals(interpretations=readings))

    assert [dict(i.values) for i in result.signals.interpretations] == [
        {"budget": "CHF 1'200", "start_date": "4 mai", "travelers": "2"},
        {"start_date": "May 4th", "travelers": "3"},
    ]
    assert result.ignored_signals == (
        "sampled readings: budget = EUR 1500, the detectors read CHF 1200",
    )


def test_signals_about_a_contradicted_value_are_believed():
    # the document says another budget: the detectors are not sure, so the judge may say so
    result = build_situation(
        request=REQUEST,
        template=TRAVEL,
        document="# Trip\n\nBudget: 900 CHF\n",
        signals=Signals(ambiguity=0.9, unclear_slots=("budget",)),
        today=TODAY,
    )

    assert result.signals.unclear_slots == ("budget",)
    assert result.ignored_signals == ()


def test_an_ignored_extraction_is_recorded_on_the_situation_and_survives_a_round_trip():
    extraction = SlotExtraction(
        slots=[ExtractedSlot(slot="budget", value="CHF 3000", confidence=0.9, evidence="")]
    )

    result = situation(Signals(), extraction)

    assert result.ignored_signals == (
        "extraction: budget: model said CHF 3000, detectors CHF 1200",
    )
    assert Situation.from_dict(result.to_dict()).ignored_signals == result.ignored_signals


def test_screening_without_sure_readings_changes_nothing():
    empty = build_situation(request="Plan a trip", template=TRAVEL, today=TODAY)
    signals = Signals(
        ambiguity=0.7,
        unclear_slots=("destination",),
        interpretations=(Interpretation(summary="a", values={"destination": "Kraków"}),),
    )

    assert screen_signals(signals, empty.slots, today=TODAY) == (signals, ())
