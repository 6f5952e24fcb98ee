"""Options, reminders and questions for the other side of a meeting, read from the task's own
notes: nothing reworded into a value nobody gave, and an honest answer when the notes hold
none."""

from __future__ import annotations

import re

from agents import skills
from agents.skills.grounding import unknown_values
from tests.agents.skills.tasks import context

TRIP = ("Ghent weekend", "Plan two days in Ghent for the three of us.")
TRIP_NOTES = (
    "Dates: 14-15 Nov\n- Saturday evening: jazz bar or the canal boat?\n"
    "- Sunday lunch undecided\n- Train booked, 09:10 from Brussels\n"
)


def _answer(title: str, goal: str, request: str, **kwargs: object) -> tuple[str, str]:
    routed, answer, facts = skills.respond(context(title, goal, request, **kwargs))  # type: ignore[arg-type]
    assert not unknown_values(answer.text, facts)
    return routed.skill, answer.text


def _items(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\s*(?:\d+\.|-)\s", line)]


def test_options_are_the_choices_the_notes_leave_open_nearest_the_request_first() -> None:
    skill, text = _answer(
        *TRIP,
        "@Assistant options for saturday evening?",
        template="travel_plan",
        document=TRIP_NOTES,
        chat=("the canal boat sounds fun", "lunch anywhere"),
    )
    assert skill == "options"
    items = _items(text)
    assert "jazz bar or the canal boat" in items[0]
    assert "the canal boat sounds fun" in items[0]  # what the chat said of it
    assert any("Sunday lunch undecided" in i for i in items)
    assert not any("Train booked" in i for i in items)  # decided: not an option


def test_options_when_the_task_holds_none_say_so_once() -> None:
    skill, text = _answer(*TRIP, "what are our options?", template="travel_plan")
    assert skill == "options"
    assert _items(text) == []
    assert text.count("no options") == 1


def test_reminders_are_the_notes_with_a_date_time_or_amount_as_many_as_asked() -> None:
    skill, text = _answer(
        "Choir term letter",
        "Letter to choir members for the spring term.",
        "@Assistant 2 reminders for the letter",
        document=(
            "- Subs £30 due by 9 Jan\n- New music folders arrived\n"
            "- First rehearsal Tue 13 Jan, 19:30\n"
        ),
    )
    assert skill == "reminders"
    assert _items(text) == ["- Subs £30 due by 9 Jan", "- First rehearsal Tue 13 Jan, 19:30"]


def test_questions_to_ask_someone_come_from_the_notes_and_skip_the_teams_own_decisions() -> None:
    skill, text = _answer(
        "Landlord meeting",
        "Meet the landlord about the lease renewal.",
        "@Assistant 4 questions to ask the landlord",
        template="meeting_brief",
        document=(
            "Meeting: Mon 2 Feb, 17:00\nAttendees: us two, landlord\n"
            "- boiler broken twice since October\n- our ask: a two-year lease\n"
            "- not decided: do we stay at all?\n"
        ),
    )
    assert skill == "questions"
    items = _items(text)
    assert len(items) == 4
    assert "What will you do about “boiler broken twice since October”?" in items[0]
    assert "our ask: a two-year lease" in items[1]
    assert not any("stay at all" in i or "Attendees" in i or "17:00" in i for i in items)


def test_a_free_form_tasks_prices_are_costs_not_its_budget_and_a_return_fare_is_no_to_do() -> None:
    _, text = _answer(
        "Porto long weekend",
        "",
        "@Assistant checklist pls",
        document=(
            "Dates: 10-13 Sept 2026\nFlights: Ryanair from Stansted, £89 return each\n"
            "- day trip to Douro undecided\n"
        ),
    )
    assert "89" not in text  # neither "keep within 89 GBP" nor the fare as a to-do
    assert "assumed" not in text  # "10-13 Sept 2026" writes the first day out
    assert "Settle: day trip to Douro undecided" in text


def test_an_earlier_request_to_the_agent_is_not_an_open_point_of_the_task() -> None:
    _, text = _answer(
        *TRIP,
        "@Assistant checklist pls",
        template="travel_plan",
        document=TRIP_NOTES,
        chat=("@Assistant what does the boat cost each?", "who books the boat? not decided"),
    )
    assert "what does the boat cost" not in text
    assert "who books the boat? not decided" in text


def test_questions_to_ask_someone_do_not_read_out_the_tasks_labelled_facts() -> None:
    _, text = _answer(
        "Porto long weekend",
        "",
        "@Assistant 3 questions to ask the Airbnb host",
        document="Dates: 10-13 Sept 2026\nStay: Airbnb in Ribeira, €540 total\n- late check-in?\n",
    )
    assert "Dates" not in text
    assert "Stay" not in text
    assert "Late check-in?" in text


def test_a_free_form_draft_does_not_restate_what_its_notes_already_say() -> None:
    routed, answer, _ = skills.respond(
        context(
            "Ghent weekend",
            "",
            "@Assistant draft it",
            document="Stay: Hotel Harmony in Patershol, €300 total\nTrain from Brussels 09:10\n",
        )
    )
    assert routed.skill == "draft"
    assert answer.suggestion is not None
    draft = answer.suggestion.replace
    assert "Stay: Hotel Harmony in Patershol, €300 total" in draft  # the note, as written
    assert "300 EUR" not in draft  # not again as "Budget: 300 EUR" or "Cost: 300 EUR"
    assert draft.count("Patershol") == 1
