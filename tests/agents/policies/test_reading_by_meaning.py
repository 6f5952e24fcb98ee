"""The reader finds values by what a slot is for (its label and description, matched by the
shipped embedding), not only when one of the slot's own words stands next to the value."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

from agents.memory import local_embeddings
from agents.policies import meaning
from agents.policies.base import SlotSpec
from agents.policies.detect import detect, find_dates
from agents.policies.situation import build_situation
from agents.policies.templates import get_template, parse_template

TODAY = date(2019, 3, 1)


@pytest.fixture(autouse=True)
def _embedding() -> Iterator[None]:
    meaning.install(local_embeddings.similarities)
    yield
    meaning.install(local_embeddings.similarities)  # as the app runs (agents/hooks.py)


def read(text: str, specs: list[SlotSpec]) -> dict[str, str]:
    return {k: d.value for k, d in detect(text, specs, today=TODAY).items()}


HOTEL = [
    SlotSpec(name="number_of_rooms", type="number", description="Number of rooms to book"),
    SlotSpec(name="star_rating", type="number", description="Star rating of the hotel"),
    SlotSpec(name="number_of_days", type="number", description="Number of days to stay"),
]


def test_a_count_no_unit_word_names_goes_to_the_slot_it_means():
    assert read("Please find me two rooms in a 1 star hotel", HOTEL) == {
        "number_of_rooms": "2",
        "star_rating": "1",
    }


def test_a_count_after_for_counts_people():
    specs = [SlotSpec(name="party_size", type="number", description="Party size for a reservation")]

    assert read("Book a table for three at noon", specs) == {"party_size": "3"}


def test_a_count_is_not_read_without_a_model_of_meaning():
    meaning.install(None)

    assert read("Please find me two rooms", HOTEL) == {}


def test_a_day_of_the_month_alone_is_the_next_such_day():
    assert [f.value for f in find_dates("A table on the 8th please", today=TODAY)] == ["2019-03-08"]
    assert [f.value for f in find_dates("the 3rd floor", today=TODAY)] == []


def test_a_day_said_on_that_day_is_today_not_next_year():
    assert [f.value for f in find_dates("events on 1st of March", today=TODAY)] == ["2019-03-01"]


def test_a_time_of_day_alone_dates_nothing():
    assert find_dates("Around 13:15 please", today=TODAY) == []
    assert [f.value for f in find_dates("tomorrow at 3pm", today=TODAY)] == ["2019-03-02"]


def test_a_place_fills_the_one_slot_its_leading_word_fits():
    specs = [
        SlotSpec(name="from_location", type="place", description="City where bus is leaving from"),
        SlotSpec(name="to_location", type="place", description="City where bus is going to"),
    ]

    assert read("Two seats from Sacramento to Fresno please", specs) == {
        "from_location": "Sacramento",
        "to_location": "Fresno",
    }


def test_the_agent_a_request_is_addressed_to_is_not_an_attendee():
    situation = build_situation(
        request="@Assistant brief for the sync with Ana and Tom on 4 May",
        template=get_template("meeting_brief"),
        today=TODAY,
    )

    attendees = situation.slot("attendees")
    assert attendees is not None
    assert "Assistant" not in (attendees.value or "")


def test_a_kind_of_task_describes_each_slot_with_examples():
    for spec in get_template("blog_post").slots:
        assert spec.description
        assert spec.examples


def test_a_slot_description_that_is_not_text_is_refused():
    with pytest.raises(ValueError, match="description"):
        parse_template(
            {"kind": "x", "title": "X", "slots": [{"name": "topic", "description": ["no"]}]}
        )


def _said(kind: str, request: str, slot: str) -> str | None:
    state = build_situation(request=request, template=get_template(kind), today=TODAY).slot(slot)
    return state.value if state is not None and state.answered else None


def test_what_a_request_is_about_is_read_without_a_cue_and_nothing_is_read_when_unsaid() -> None:
    topic = _said(
        "related_work",
        "@Assistant could you sort the related work for soil microbes under drought stress, "
        "grouped by method, APA",
        "topic",
    )
    assert topic is not None
    assert "soil microbes" in topic
    subject = _said(
        "lesson_plan", "@Assistant evening class, photosynthesis basics, 50 min", "subject"
    )
    assert subject is not None
    assert "photosynthesis" in subject
    # only words that ask for the work, a length and a style: nothing to read as the topic
    assert (
        _said("related_work", "@Assistant please write the related work section, APA", "topic")
        is None
    )
    assert (
        _said("lesson_plan", "@Assistant can you plan my class for Tuesday, 50 min", "subject")
        is None
    )
