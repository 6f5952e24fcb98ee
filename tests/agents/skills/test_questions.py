"""Questions for people (discussion starters, interview, feedback, FAQ), the checklist's many
names, a request that is not a preference, and what someone said they need as an open point."""

from __future__ import annotations

import re

import pytest

from agents import skills
from agents.skills.grounding import unknown_values
from agents.skills.route import route
from tests.agents.skills.tasks import context

LESSON = (
    "Year 9 — Introduction to volcanoes",
    "50-minute lesson for 24 students; by the end students can explain why volcanoes erupt",
)
JOB = ("Job ad: data analyst", "Publish the ad by 12 March 2027")
JOB_NOTES = "Must: Excel, SQL\nNice to have: Power BI\nTeam of 4\n"


def _answer(title: str, goal: str, request: str, **kwargs: object) -> tuple[str, str]:
    routed, answer, _ = skills.respond(context(title, goal, request, **kwargs))  # type: ignore[arg-type]
    return routed.skill, answer.text


def _items(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\s*(?:\d+\.|-)\s", line)]


def test_starter_questions_are_about_the_lessons_subject_and_as_many_as_asked() -> None:
    skill, text = _answer(
        *LESSON, "4 starter questions to get them talking", template="lesson_plan"
    )
    assert skill == "questions"
    assert len(_items(text)) == 4
    assert all("volcanoes" in item for item in _items(text))
    assert "Introduction to" not in text  # the title's lead-in is not the subject


def test_interview_questions_ask_about_the_skills_the_document_lists() -> None:
    skill, text = _answer(*JOB, "five interview questions please", document=JOB_NOTES)
    assert skill == "questions"
    assert len(_items(text)) == 5
    assert "using Excel" in text
    assert "using SQL" in text
    assert "data analyst" in text


def test_an_faq_answers_from_the_task_and_says_what_is_not_decided() -> None:
    skill, text = _answer(
        "Street party",
        "Street party on Saturday 12 June 2027 at Elm Road, budget £300",
        "can you write a short FAQ for the flyer?",
    )
    assert skill == "questions"
    assert "When is it? Saturday 12 June 2027." in text
    assert "What does it cost? 300 GBP." in text
    assert "Who is involved? Not decided yet" in text


def test_questions_invent_no_number_date_or_name() -> None:
    for request in ("6 discussion questions", "feedback questions", "interview questions", "FAQ"):
        _, text = _answer(*JOB, request, document=JOB_NOTES)
        facts = skills.facts_from_context(context(*JOB, request, document=JOB_NOTES))
        assert unknown_values(text, facts) == [], (request, text)


def test_more_questions_than_the_task_supports_are_not_padded() -> None:
    _, text = _answer("Feedback", "Collect feedback on the workshop", "12 feedback questions")
    assert len(_items(text)) < 12
    assert "the task does not say enough for more" in text


@pytest.mark.parametrize(
    "request_text",
    [
        "packing list for the kids?",
        "what should I bring?",
        "shopping list please",
        "prep list for Friday",
        "make a list of supplies",
        "list everything we need",
        "what still needs doing?",
        "a to do list for tomorrow",
    ],
)
def test_a_checklist_by_any_of_its_names_routes_to_the_checklist(request_text: str) -> None:
    assert route(request_text).skill == "checklist"


def test_an_order_to_bullet_something_is_work_not_a_preference() -> None:
    assert route("bullet the key points").skill == "summary"
    assert route("I prefer bullet points").skill == "preferences"
    assert route("please use British spelling").skill == "preferences"


def test_what_someone_said_they_need_is_an_open_point() -> None:
    _, text = _answer(
        "Laptops",
        "Order 6 laptops by 30 April 2027",
        "list the open questions",
        chat=("I need a discrete GPU for the vision work", "sounds good"),
    )
    assert "“I need a discrete GPU for the vision work” was said in the chat" in text
    assert "sounds good" not in text


def test_a_share_is_worked_out_from_the_amount_and_count_the_task_gives() -> None:
    doc = "Stay: Airbnb in Ribeira, €540 total for 3 nights\nFlights: £89 return each\n"
    _, text = _answer(
        "Porto weekend",
        "A 3-night trip to Porto for four friends",
        "how much is the airbnb each?",
        document=doc,
    )
    assert text.startswith("About 135 EUR per person: 540 EUR")
    assert "divided by 4" in text
    _, text = _answer(
        "Book club", "Party", "how much per head if all 32 come, with the whole £600?"
    )
    assert text.startswith("About 18.75 GBP per person: 600 GBP")
    _, text = _answer(
        "Bake sale",
        "Run the stall",
        "target per volunteer?",
        document="Target: raise £400\n- 12 volunteers\n",
    )
    assert text.startswith("About 33.33 GBP per volunteer")


def test_a_share_without_a_count_is_not_guessed() -> None:
    _, text = _answer("Party", "Budget £600", "how much per head?")
    assert "per person" not in text


def test_all_is_a_word_not_albanian_lek_and_pence_are_kept() -> None:
    from agents.policies.parse_money import find_money
    from agents.skills.write import say_money

    assert find_money("if all 32 come") == []
    assert [m.value for m in find_money("ALL 3,000")] == ["ALL 3000"]
    assert say_money("GBP 12.6") == "12.60 GBP"
    assert say_money("EUR 1500") == "1,500 EUR"


def test_when_and_where_answers_both() -> None:
    _, text = _answer(
        "Quiz night", "Quiz night on Friday 12 March 2027 in Bristol", "when and where is it?"
    )
    assert "12 March 2027" in text
    assert "Bristol" in text
