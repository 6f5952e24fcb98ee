"""The default policy through the one entry point, `decide_from_context`, on hand-written
contexts: it asks only about what blocks, names conflicts, never re-asks, and reads only the
requester's own memory."""

from __future__ import annotations

from datetime import date

import pytest

from agents.policies import DEFAULT_POLICY
from agents.policies.adapter import decide_from_context, situation_from_context

TODAY = date(2027, 3, 1)


def context(**overrides: object) -> dict:
    base = {
        "task": {"id": 1, "title": "Lisbon trip", "goal": "", "template": "travel_plan"},
        "request": "",
        "messages": [],
        "document": "",
        "memory": [],
        "memory_items": [],
        "answers": [],
        "requested_by_id": 1,
    }
    return base | overrides


def decide(ctx: dict, **options: object) -> dict:
    options.setdefault("today", TODAY)
    return decide_from_context(DEFAULT_POLICY, ctx, **options)


def fact(person_id: int, key: str, value: str, **extra: object) -> dict:
    return {
        "item_id": None,
        "person_id": person_id,
        "person_name": f"user{person_id}",
        "key": key,
        "value": value,
        "scope": "workspace",
        "kinds": [],
        "text": f"{key}: {value}",
        "shared": False,
    } | extra


DOCUMENT_WITH_BUDGET = """## Overview
A long weekend in Lisbon for the two of us.

## Costs
| Item | Amount |
| --- | --- |
| Budget | 1.200 € |
"""


def test_a_budget_the_document_states_is_never_asked_about():
    record = decide(
        context(request="@Agent plan it", document=DOCUMENT_WITH_BUDGET),
        template_kind="travel_plan",
    )

    assert "budget" not in record["detail"]["ask_slots"]
    budget = next(s for s in record["situation"]["slots"] if s["spec"]["name"] == "budget")
    assert (budget["value"], budget["source"]) == ("EUR 1200", "document")


def test_only_what_is_really_missing_is_asked():
    record = decide(
        context(request="@Agent plan it", document=DOCUMENT_WITH_BUDGET),
        template_kind="travel_plan",
    )

    assert record["decision"] == "ask"
    assert record["detail"]["ask_slots"] == ["start_date"]  # destination and budget are stated
    assert record["question"].count("?") == 1


@pytest.mark.parametrize(
    "document",
    [
        "Budget: 900 EUR",
        "- **Budget:** €900",
        "## Budget\n900 EUR\n",
        "| Budget | Dates |\n|---|---|\n| 900 EUR | tbd |\n",
        "We can spend €900 in total on this trip.",
    ],
)
def test_the_document_states_a_value_anywhere(document):
    situation = situation_from_context(
        context(request="Plan the trip to Lisbon", document=document),
        template_kind="travel_plan",
        today=TODAY,
    )

    budget = situation.slot("budget")
    assert budget is not None
    assert (budget.value, budget.source) == ("EUR 900", "document")


def test_a_request_contradicting_the_document_gets_a_question_naming_both_values():
    record = decide(
        context(
            request="Plan the trip to Lisbon for 12 people on 4 May, budget 3000 EUR",
            document="Travellers: 15 people\n",
        ),
        template_kind="travel_plan",
    )

    assert record["decision"] == "ask"
    assert "12" in record["question"]
    assert "15" in record["question"]
    assert "Your message says 12 people, the document 15: which is right?" in record["question"]
    assert record["detail"]["questions"][0]["choices"] == ["12", "15"]


def test_the_goal_contradicting_the_document_names_the_goal():
    record = decide(
        context(
            task={"id": 1, "title": "Offsite", "goal": "Trip to Porto for 12 people on 4 May"},
            request="Go ahead with the plan, budget 2000 EUR",
            document="We are 15 people in total.",
        ),
        template_kind="travel_plan",
    )

    assert record["question"].startswith("Before I start, a quick question:\nThe goal says")
    assert "12" in record["question"]
    assert "15" in record["question"]


@pytest.mark.parametrize(
    "request_text",
    [
        "Summarise the goal in one sentence",
        "Suggest a title",
        "What would you do next?",
        "Proofread the document",
    ],
)
def test_a_request_that_needs_no_value_gets_no_question(request_text):
    record = decide(context(request=request_text), template_kind="travel_plan")

    assert record["decision"] == "act"
    assert record["question"] == ""


def test_a_training_plan_is_not_taken_for_a_meeting():
    record = decide(
        context(
            task={
                "id": 1,
                "title": "Plan the team offsite",
                "goal": "Draft a two-day offsite plan with an agenda mixing planning and time off",
            },
            request="Plan a two-day team training",
        ),
        template_kind=None,
    )

    assert record["situation"]["template"] is None
    assert record["decision"] == "act"


def test_a_question_nobody_answered_is_not_asked_again():
    first = decide(context(request="Plan a trip to Lisbon"), template_kind="travel_plan")
    assert first["decision"] == "ask"

    again = decide(
        context(
            request="Plan a trip to Lisbon",
            messages=[
                {"kind": "human", "body": "Plan a trip to Lisbon"},
                {"kind": "agent", "body": first["question"]},
                {"kind": "human", "body": "Plan a trip to Lisbon"},
            ],
        ),
        template_kind="travel_plan",
    )

    assert again["decision"] == "act"
    assert "start date" in again["assumption"]


def test_ask_me_less_from_one_person_does_not_change_how_another_is_treated():
    items = [fact(1, "asking", "never", shared=True)]
    request = "Plan a trip to Lisbon"

    alice = decide(
        context(request=request, memory_items=items, requested_by_id=1), template_kind="travel_plan"
    )
    bob = decide(
        context(request=request, memory_items=items, requested_by_id=2), template_kind="travel_plan"
    )

    assert alice["decision"] == "act"
    assert "I chose the start date" in alice["assumption"]
    assert bob["decision"] == "ask"


def test_at_most_one_question_caps_the_message():
    ctx = context(
        request="Plan a trip to Portland with the team",
        memory_items=[fact(1, "asking", "at_most:1")],
    )
    record = decide(ctx, template_kind="travel_plan")

    assert record["decision"] == "ask"
    assert len(record["detail"]["questions"]) == 1


def test_a_place_several_cities_share_is_asked_about_with_its_readings():
    record = decide(
        context(request="Plan a trip to Portland on 4 May, budget $2000"),
        template_kind="travel_plan",
    )

    assert record["decision"] == "ask"
    choices = record["detail"]["questions"][0]["choices"]
    assert "Portland, Oregon" in choices
    assert "Portland, Maine" in choices


def test_a_numeric_date_with_two_readings_is_asked_about():
    record = decide(
        context(request="Plan a trip to Lisbon from 03/04, budget 900 EUR"),
        template_kind="travel_plan",
    )

    assert record["decision"] == "ask"
    assert record["detail"]["questions"][0]["choices"] == ["3 April", "4 March"]


def test_the_requesters_date_format_settles_a_numeric_date():
    record = decide(
        context(
            request="Plan a trip to Lisbon from 03/04, budget 900 EUR",
            memory_items=[fact(1, "date_format", "day_month_year")],
        ),
        template_kind="travel_plan",
    )

    assert record["decision"] == "act"


def test_the_usual_room_is_asked_unless_memory_says_which():
    task = {"id": 1, "title": "Weekly sync", "goal": "", "template": "meeting_brief"}
    request = "Prepare the meeting brief for tomorrow with Ana about the roadmap, in the usual room"

    unknown = decide(context(task=task, request=request), template_kind="meeting_brief")
    known = decide(
        context(task=task, request=request, memory_items=[fact(1, "slot:location", "Room 4.2")]),
        template_kind="meeting_brief",
    )

    assert unknown["decision"] == "ask"
    assert "the usual room" in unknown["question"]
    assert known["decision"] == "act"


def test_memory_of_another_person_fills_no_slot_unless_shared():
    request = "Plan a trip to Lisbon on 4 May"
    private = [fact(1, "slot:budget", "900 EUR")]
    shared = [fact(1, "slot:budget", "900 EUR", shared=True)]

    assert (
        decide(
            context(request=request, memory_items=private, requested_by_id=1),
            template_kind="travel_plan",
        )["decision"]
        == "act"
    )
    assert (
        decide(
            context(request=request, memory_items=private, requested_by_id=2),
            template_kind="travel_plan",
        )["decision"]
        == "ask"
    )
    assert (
        decide(
            context(request=request, memory_items=shared, requested_by_id=2),
            template_kind="travel_plan",
        )["decision"]
        == "act"
    )


def test_every_value_used_without_asking_that_is_not_a_default_is_stated():
    record = decide(
        context(
            request="Plan the trip to Lisbon for 12 people on 4 May, budget 3000 EUR",
            document="Travellers: 15 people\n",
            memory_items=[fact(1, "asking", "never")],
        ),
        template_kind="travel_plan",
    )

    assert record["decision"] == "act"
    assert "I assumed the travelers is 12 (not 15)" in record["assumption"]
    assert "pace" not in record["assumption"]  # the template's default is not an assumption


def test_relative_dates_are_read_against_the_requests_own_date():
    situation = situation_from_context(
        context(request="Plan a trip to Lisbon next Friday", request_date="2027-03-04"),
        template_kind="travel_plan",
    )

    assert situation.slot("start_date").value == "2027-03-05"  # type: ignore[union-attr]


def test_non_ascii_names_and_currencies_are_read():
    situation = situation_from_context(
        context(request="Plan a trip to Kraków with Zoë on 4 May, budget 1 200 zł"),
        template_kind="travel_plan",
        today=TODAY,
    )

    assert situation.slot("destination").value == "Kraków"  # type: ignore[union-attr]
    assert situation.slot("budget").value == "PLN 1200"  # type: ignore[union-attr]


def test_next_friday_is_asked_about_with_both_readings():
    monday = decide(
        context(
            task={"id": 1, "title": "Sync", "goal": "", "template": "meeting_brief"},
            request="Prepare a meeting brief next Friday with Ana about the roadmap",
        ),
        template_kind="meeting_brief",
    )
    saturday = decide(
        context(
            task={"id": 1, "title": "Sync", "goal": "", "template": "meeting_brief"},
            request="Prepare a meeting brief next Friday with Ana about the roadmap",
        ),
        template_kind="meeting_brief",
        today=date(2027, 3, 6),
    )

    assert monday["detail"]["questions"][0]["choices"] == ["5 March", "12 March"]
    assert saturday["detail"]["questions"][0]["choices"] == ["12 March", "19 March"]


def test_a_version_number_is_not_a_numeric_date_and_a_city_needs_no_cue():
    situation = situation_from_context(
        context(request="Need an itinerary: Kraków, version 8.6 of the plan, from 4 May"),
        template_kind="travel_plan",
        today=TODAY,
    )

    assert situation.slot("destination").value == "Kraków"  # type: ignore[union-attr]
    assert situation.slot("start_date").value == "2027-05-04"  # type: ignore[union-attr]
    assert situation.ambiguities == ()


def test_a_date_in_the_documents_notes_does_not_contradict_the_request():
    situation = situation_from_context(
        context(
            request="Plan a trip to Lisbon from 5 April 2027",
            document="Notes from Monday (keep these):\n- Check with legal before sending.\n",
        ),
        template_kind="travel_plan",
        today=TODAY,
    )

    assert situation.conflicts == ()


def test_a_vague_quantity_is_asked_about_and_the_requesters_name_is_no_value():
    record = decide(
        context(
            task={"id": 1, "title": "Trip for Zoë", "goal": "", "template": "travel_plan"},
            request="Plan a trip to Lisbon from 4 May 2027 for a handful of people, budget €900",
            requested_by="Zoë",
        ),
        template_kind="travel_plan",
    )

    assert record["decision"] == "ask"
    assert 'Which do you mean by "a handful of people"' not in record["question"]
    assert '"a handful of people"' in record["question"]


def test_a_required_value_nobody_gave_is_stated_when_the_agent_goes_ahead():
    from agents.policies.ask_when_blocked import OPEN_VALUE, AskWhenBlocked
    from agents.policies.base import AskingBudget
    from agents.policies.situation import build_situation
    from agents.policies.templates import get_template

    situation = build_situation(
        request="Write a blog post for experts.",
        template=get_template("blog_post"),
        budget=AskingBudget(preference="never"),
    )
    decision = AskWhenBlocked().decide(situation)
    assert decision.action == "act"
    assert [(a.slot, a.value) for a in decision.assumptions if a.slot == "topic"] == [
        ("topic", OPEN_VALUE)
    ]
    assert "topic myself" in decision.assumption_text
    assert OPEN_VALUE not in decision.assumption_text


def test_a_required_value_with_a_template_default_is_assumed_and_said_not_asked():
    from agents.policies.ask_when_blocked import AskWhenBlocked
    from agents.policies.situation import build_situation
    from agents.policies.templates import get_template

    situation = build_situation(
        request="Draft the related work section on speech recognition for Yoruba.",
        template=get_template("related_work"),
    )
    decision = AskWhenBlocked().decide(situation)
    assert decision.action == "act", decision.questions
    assert ("organisation", "by theme") in [(a.slot, a.value) for a in decision.assumptions]
    assert "by theme" in decision.assumption_text
