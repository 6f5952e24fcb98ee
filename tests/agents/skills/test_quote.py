"""A question about what the task says is answered with the line that says it, quoted with
where it came from (agents/skills/quote.py); advice and opinions are not answered from it, and
nothing a line does not say is added."""

from __future__ import annotations

import pytest

from agents import skills
from agents.skills.quote import is_question
from tests.agents.skills.tasks import OFFSITE, context

CLEAN_UP = ("Park clean-up", "Clear the riverside path on Saturday morning with volunteers.")
NOTES = "## Logistics\n- Council lends 30 grabbers\n- The van returns to the depot at 13:15\n"


def _respond(request: str, **kwargs: object) -> tuple[skills.Route, skills.SkillAnswer]:
    asked, answer, _ = skills.respond(context(*CLEAN_UP, request, **kwargs))  # type: ignore[arg-type]
    return asked, answer


def test_a_question_the_document_answers_gets_its_line_quoted() -> None:
    asked, answer = _respond(
        "@Assistant what time does the van return to the depot?", document=NOTES
    )
    assert asked.skill == "answer_text"
    assert answer.text == "The document says: “Logistics: The van returns to the depot at 13:15”."


def test_a_line_of_the_chat_is_quoted_as_the_chats() -> None:
    chat = ("tom: the grabbers come in two boxes, pick up from reception",)
    _, answer = _respond("where do we pick up the grabbers?", chat=chat, document=NOTES)
    assert answer.text.startswith("The chat says: “tom: the grabbers come in two boxes")


def test_one_word_in_common_is_a_topic_not_an_answer() -> None:
    ctx = context(*CLEAN_UP, "what does the van cost per day?", document=NOTES)
    _, answer, _ = skills.respond(ctx)  # "van" only, and 13:15 is no amount
    assert answer.skill == "not_in_task"
    assert answer.text.startswith("I found no line of the task that answers that")
    assert "13:15" not in answer.text


@pytest.mark.parametrize(
    ("request_", "expected"),
    [
        ("what time does the van return?", True),
        ("are we at 30 grabbers?", True),
        ("should we rent bikes?", False),
        ("is the walking tour a good idea?", False),
        ("how do we get to the depot?", False),
        ("write the flyer", False),
    ],
)
def test_only_questions_about_what_the_task_says_are_answered_from_it(
    request_: str, expected: bool
) -> None:
    assert is_question(request_) is expected


def test_a_typed_answer_gets_the_line_about_what_else_was_asked() -> None:
    document = "- Venue: Casa do Alentejo\n- Coach from the airport: 18 seats, booked\n"
    text = skills.respond(
        context(*OFFSITE, "when is the coach from the airport?", document=document)
    )[1].text
    assert "Saturday 12 June 2027" in text  # the task's date, from its values
    assert "“Coach from the airport: 18 seats, booked”" in text  # what the question was about


@pytest.mark.parametrize(
    ("request_", "document", "line"),
    [
        ("how long we have the van for", "Van: Hire-A-Van, booked 08:00-14:00\n", "08:00-14:00"),
        ("how many staff", "- Trial: Feb-Apr 2025, 9 staff\n- Fridays off\n", "9 staff"),
        ("what does the hall cost?", "- Hall: St Mary's, £120 for the evening\n", "£120"),
    ],
)
def test_one_word_in_common_answers_when_the_line_holds_the_kind_of_value_asked(
    request_: str, document: str, line: str
) -> None:
    _, answer, _ = skills.respond(context(*CLEAN_UP, request_, document=document))
    assert answer.skill == "answer_text"
    assert line in answer.text


@pytest.mark.parametrize("request_", ["how many times does the van come?", "what's the van cost?"])
def test_a_line_holding_another_kind_of_value_is_no_answer(request_: str) -> None:
    _, answer, _ = skills.respond(context(*CLEAN_UP, request_, document=NOTES))  # 13:15 only
    assert answer.skill == "not_in_task"


def test_where_quotes_the_venue_line_beside_the_town_read_from_it() -> None:
    document = (
        "# Evening\nDate: Sat 18 April 2026, 19:00\nVenue: back room of The Heron pub, Bristol\n"
    )
    _, where = _respond("where is the party?", document=document)
    assert "Bristol (from the document)" in where.text
    assert "“Evening: Venue: back room of The Heron pub, Bristol”" in where.text
    _, when = _respond("when is the party?", document=document)
    assert "19:00" in when.text  # the line says the time the date leaves out
