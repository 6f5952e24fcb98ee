"""The engine's turn context (a plain dict) in, a storable decision record out."""

from __future__ import annotations

import json
from datetime import date

import pytest

from agents.policies.adapter import decide_from_context, situation_from_context
from agents.policies.bandit import ContextualBandit

TODAY = date(2026, 3, 2)


def context(**overrides: object) -> dict:
    base = {
        "task": {"id": 1, "title": "Lisbon trip", "goal": "An itinerary for our holiday"},
        "request": "",
        "messages": [],
        "document": "",
        "memory": [],
        "answers": [],
        "notes": [],
    }
    return base | overrides


def test_a_clear_request_is_acted_on_with_the_template_guessed_from_the_task():
    record = decide_from_context(
        "value_of_information",
        context(
            request="Plan a relaxed trip to Lisbon from 4 May to 9 May for 2 people, budget €1500"
        ),
        today=TODAY,
    )

    assert record["decision"] == "act"
    assert record["question"] == ""
    assert record["situation"]["template"] == "travel_plan"
    json.dumps(record)  # storable as it is


def test_a_vague_request_gets_one_question_message():
    record = decide_from_context(
        "value_of_information", context(request="Plan something nice"), today=TODAY
    )

    assert record["decision"] == "ask"
    assert record["question"].count("?") == len(record["detail"]["questions"])
    assert "When does the trip start?" in record["question"]
    assert "Where are you going?" not in record["question"]  # the title says "Lisbon trip"


def test_the_answer_to_a_question_card_fills_its_slot():
    situation = situation_from_context(
        context(
            request="Go ahead",
            answers=[{"question": "Before I start:\n1. Where are you going?", "answer": "Porto"}],
        ),
        today=TODAY,
    )

    destination = situation.slot("destination")
    assert destination is not None
    assert (destination.value, destination.source) == ("Porto", "chat")
    assert situation.budget.asked_in_episode == 1


def test_the_request_falls_back_to_the_last_human_message_and_agents_are_not_people():
    situation = situation_from_context(
        context(
            messages=[
                {"kind": "agent", "body": "Shall I book Paris?"},
                {"kind": "human", "body": "Trip to Rome in June please"},
            ]
        ),
        today=TODAY,
    )

    assert situation.request == "Trip to Rome in June please"
    assert situation.slot("destination").value == "Rome"  # type: ignore[union-attr]


def test_a_message_said_after_the_request_corrects_what_the_request_said():
    request = "Trip to Rome for 4 travelers, please"
    messages = [
        {"kind": "human", "body": "The travelers should be 3."},  # before: the request wins
        {"kind": "human", "body": request},
        {"kind": "agent", "body": "Done: a plan for 4 travelers."},
        {"kind": "human", "body": "Thanks! The travelers should be 6."},  # after: it wins
    ]

    situation = situation_from_context(context(request=request, messages=messages), today=TODAY)
    before_only = situation_from_context(
        context(request=request, messages=messages[:3]), today=TODAY
    )

    assert situation.slot("travelers").value == "6"  # type: ignore[union-attr]
    assert before_only.slot("travelers").value == "4"  # type: ignore[union-attr]


def _asking(person_id, value):
    return {
        "item_id": person_id,
        "person_id": person_id,
        "person_name": f"user{person_id}",
        "key": "asking",
        "value": value,
        "scope": "workspace",
        "kinds": [],
        "text": "Please ask me fewer questions",
        "shared": True,
    }


def test_ask_me_less_in_memory_reaches_the_budget_of_that_person_only():
    items = [_asking(1, "less")]
    mine = situation_from_context(
        context(request="Plan it", memory_items=items, requested_by_id=1), today=TODAY
    )
    theirs = situation_from_context(
        context(request="Plan it", memory_items=items, requested_by_id=2), today=TODAY
    )

    assert mine.budget.preference == "less"
    assert theirs.budget.preference == "normal"


def test_the_prose_memory_lines_do_not_reach_the_policy():
    situation = situation_from_context(
        context(request="Plan it", memory=["Please ask me fewer questions"]), today=TODAY
    )

    assert situation.budget.preference == "normal"


def test_a_learning_policy_returns_its_new_state():
    state = ContextualBandit(seed=4).to_state()

    record = decide_from_context(
        "bandit", context(request="Plan a trip"), policy_state=state, today=TODAY
    )

    assert record["policy_state"]["step"] == 1
    assert sum(record["detail"]["probabilities"].values()) == 1.0


@pytest.mark.parametrize(
    ("title", "request_text", "action"),
    [
        (
            "Trip",
            "Plan a relaxed trip to Lisbon from 4 May to 9 May for 2 people, budget €1500",
            "act",
        ),
        ("Trip", "Plan a trip to Rome next Friday", "suggest"),
        ("Trip", "Plan a trip", "ask"),
        ("Post", "Write a blog post about Rust async for beginners, casual, 1200 words", "act"),
        ("Post", "Write a blog post about Rust async", "suggest"),
        ("Post", "Write a blog post", "ask"),
        ("Class", "Lesson plan: 50-minute lesson on photosynthesis for year 9", "act"),
        ("Class", "Make a lesson plan", "ask"),
        ("Sync", "Prepare a brief for my meeting with Ana tomorrow about the Q3 roadmap", "act"),
        ("Sync", "Prepare a meeting brief", "ask"),
        ("Paper", "Related work on federated learning privacy, chronological", "act"),
        ("Paper", "Help with the related work", "ask"),
    ],
)
def test_the_default_policy_acts_on_clear_requests_and_asks_about_vague_ones(
    title, request_text, action
):
    record = decide_from_context(
        "value_of_information",
        context(task={"id": 1, "title": title, "goal": ""}, request=request_text),
        today=TODAY,
    )

    assert record["decision"] == action, record["reason"]
