"""Answers on a question card go back to the slots the card asked about, sentence by sentence."""

from __future__ import annotations

from datetime import date

from agents.policies.adapter import answers_by_slot
from agents.policies.templates import get_template

TODAY = date(2027, 3, 5)


def card(question: str, answer: str) -> dict:
    return {"answers": [{"question": question, "answer": answer}]}


def test_a_multi_question_card_gives_each_slot_its_own_sentence():
    travel = get_template("travel_plan")
    message = "Before I start:\n1. Where are you going?\n2. What is the total budget?"
    got = answers_by_slot(
        card(message, "Destination: Kraków. I already said: the budget is 1 200 zł."),
        travel,
        today=TODAY,
    )
    assert got["destination"] == "Kraków"
    assert "budget" in got
    assert got["budget"] != got["destination"]


def test_a_free_text_answer_stops_at_its_sentence():
    blog = get_template("blog_post")
    message = "Before I start:\n1. What is the post about?\n2. Who is it for?"
    got = answers_by_slot(
        card(message, "Café culture in Zürich. And remember: ask me less."), blog, today=TODAY
    )
    assert got.get("topic") == "Café culture in Zürich"


def test_a_bare_number_answers_a_number_question_and_words_do_not():
    travel = get_template("travel_plan")
    question = "Before I start, a quick question:\nHow many people are travelling?"
    assert answers_by_slot(card(question, "4."), travel, today=TODAY)["travelers"] == "4"
    assert answers_by_slot(card(question, "We'll be six."), travel, today=TODAY)["travelers"] == "6"
    assert "travelers" not in answers_by_slot(
        card(question, "No idea, sorry!"), travel, today=TODAY
    )


def test_an_ambiguity_or_conflict_question_maps_to_the_slot_it_names():
    travel = get_template("travel_plan")
    ambiguity = (
        'Which do you mean by "next Friday" for the start date? (12 March / 19 March / other)'
    )
    got = answers_by_slot(card(ambiguity, "I meant 12 March 2027."), travel, today=TODAY)
    assert got == {"start_date": "2027-03-12"}
    conflict = "Your message says 3 people, the document 5: which is right? (3 / 5 / other)"
    assert answers_by_slot(card(conflict, "Travelers: 3."), travel, today=TODAY) == {
        "travelers": "3"
    }


def test_wrapping_words_are_dropped_from_a_free_text_answer():
    meeting = get_template("meeting_brief")
    question = "Before I start, a quick question:\nWhat should the meeting decide or achieve?"
    got = answers_by_slot(card(question, "It's the office move in Łódź."), meeting, today=TODAY)
    assert got.get("purpose") == "the office move in Łódź"
