from __future__ import annotations

from datetime import date

import pytest

from agents.policies.detect import detect, find_dates, find_money
from agents.policies.templates import get_template

TODAY = date(2026, 3, 2)  # a Monday


def detected(kind: str, text: str) -> dict[str, str]:
    return {k: d.value for k, d in detect(text, get_template(kind).slots, today=TODAY).items()}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("on 2026-05-04", ["2026-05-04"]),
        ("on 4 May", ["2026-05-04"]),
        ("May 4th, 2027", ["2027-05-04"]),
        ("the 1st of February", ["2027-02-01"]),  # already past this year: next year
        ("from 4 May to 9 May", ["2026-05-04", "2026-05-09"]),
        ("4-9 May", ["2026-05-04", "2026-05-09"]),
        ("Aug 3-5", ["2026-08-03", "2026-08-05"]),
        ("tomorrow", ["2026-03-03"]),
        ("next Friday", ["2026-03-06"]),
        ("on monday", ["2026-03-09"]),
        ("in 2 weeks", ["2026-03-16"]),
        ("sometime in June", ["2026-06"]),
        ("you may 2 things", []),
        ("no date here", []),
    ],
)
def test_dates_are_found_in_many_phrasings(text, expected):
    assert [f.value for f in find_dates(text, today=TODAY)] == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("budget €1,500", "EUR 1500"),
        ("about $2k total", "USD 2000"),
        ("1500 euros", "EUR 1500"),
        ("GBP 300", "GBP 300"),
        ("3 thousand pounds", "GBP 3000"),
        ("1.500 EUR", "EUR 1500"),
        ("£49.99", "GBP 49.99"),
    ],
)
def test_money_is_found_with_its_currency(text, expected):
    assert [f.value for f in find_money(text)] == [expected]


def test_a_full_travel_request_fills_every_slot_it_states():
    found = detected(
        "travel_plan",
        "Plan a relaxed 5-night trip to Lisbon from 4 May to 9 May for 2 adults, budget €1,500, "
        "leaving from Porto.",
    )

    assert found == {
        "destination": "Lisbon",
        "start_date": "2026-05-04",
        "end_date": "2026-05-09",
        "nights": "5",
        "travelers": "2",
        "budget": "EUR 1500",
        "pace": "relaxed",
        "origin": "Porto",
    }


@pytest.mark.parametrize(
    ("kind", "text", "expected"),
    [
        ("travel_plan", "visit New York next Friday, three people", {"destination": "New York"}),
        ("travel_plan", "a laid-back week in Kyoto", {"pace": "relaxed", "nights": "7"}),
        ("travel_plan", "Budget: 900", {"budget": "900"}),
        ("travel_plan", "a trip to the Alps", {"destination": "Alps"}),
        ("travel_plan", "Japan, nothing too busy", {"pace": None}),
        ("travel_plan", "I don't want a packed trip, keep it slow", {"pace": "relaxed"}),
        ("travel_plan", "max 800€, 2 of us", {"budget": "EUR 800", "travelers": "2"}),
        (
            "travel_plan",
            "From March 3rd until March 10th",
            {"start_date": "2026-03-03", "end_date": "2026-03-10"},
        ),
        ("travel_plan", "leaving Friday, back Sunday", {"end_date": "2026-03-08"}),
        ("travel_plan", "Destination: Reykjavik", {"destination": "Reykjavik"}),
        ("related_work", "IEEE style, around 20 papers", {"citation_style": "IEEE"}),
        ("related_work", "organised chronologically? no, thematic", {"organisation": "by theme"}),
        ("related_work", "covering work since 2019", {"since_year": "2019"}),
        ("meeting_brief", "meeting with Ana and Ben Okafor", {"attendees": "Ana, Ben Okafor"}),
        ("meeting_brief", "a 45-minute Zoom", {"duration_minutes": "45", "format": "video call"}),
        ("meeting_brief", "sync with @carol tomorrow", {"attendees": "carol"}),
        (
            "meeting_brief",
            "on 12 March with Sam, Priya & Lee: decide the Q2 budget",
            {"attendees": "Sam, Priya, Lee", "purpose": "the Q2 budget"},
        ),
        ("blog_post", "Topic: why we moved to Postgres", {"topic": "why we moved to Postgres"}),
        ("blog_post", "a post about Rust async for newcomers", {"audience": "beginners"}),
        ("blog_post", "a post about Rust async for newcomers", {"topic": "Rust async"}),
        ("blog_post", "keep it funny, 1200 words", {"tone": "playful", "length_words": "1200"}),
        ("lesson_plan", "a 50-minute lesson on photosynthesis", {"subject": "photosynthesis"}),
        ("lesson_plan", "for year 9, 28 students", {"level": "secondary", "class_size": "28"}),
    ],
)
def test_slot_detection_on_a_table_of_phrasings(kind, text, expected):
    found = detected(kind, text)

    assert {k: found.get(k) for k in expected} == expected


def test_a_slot_named_just_before_a_date_takes_it():
    found = detected("travel_plan", "Return on 9 May; we leave 4 May")

    assert found["end_date"] == "2026-05-09"
    assert found["start_date"] == "2026-05-04"


def test_conflicting_choices_are_detected_with_low_confidence():
    found = detect(
        "relaxed or packed, I can't decide", get_template("travel_plan").slots, today=TODAY
    )

    assert found["pace"].confidence < 0.5


def test_a_date_in_weeks_is_not_a_trip_length():
    found = detected("travel_plan", "Rome in 2 weeks")

    assert found.get("nights") is None
    assert found["start_date"] == "2026-03-16"


def test_a_vague_request_fills_nothing():
    assert detected("travel_plan", "Plan a trip") == {}
