from __future__ import annotations

from datetime import date

import pytest

from agents.policies.base import SlotSpec
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
        ("10-13 Sept 2025", ["2025-09-10", "2025-09-13"]),  # the year given, even if past
        ("Sept 10-13, 2025", ["2025-09-10", "2025-09-13"]),
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


# --- free text with decimals, non-ASCII capitals, lists of people ---------------------------


def test_a_version_number_keeps_its_point():
    from agents.policies.detect_names import find_free_text

    found = find_free_text(
        "release notes for Tessera, version 8.6, shipping on 6 April", SlotSpec(name="version")
    )
    assert [f.value for f in found] == ["8.6"]


def test_a_topic_keeps_the_place_it_names_but_not_a_trailing_clause():
    from agents.policies.detect_names import find_free_text

    spec = SlotSpec(name="topic", cues=("about",))
    assert find_free_text("a post about café culture in Zürich, for experts", spec)[0].value == (
        "café culture in Zürich"
    )
    assert find_free_text("a post about budget cuts in the spring", spec)[0].value == "budget cuts"


def test_place_names_may_start_with_a_non_ascii_capital():
    from agents.policies.detect_names import find_places

    spec = SlotSpec(name="venue", type="place", cues=("at",))
    assert find_places("at Sala Ñandú, for 20 guests", spec)[0].value == "Sala Ñandú"
    assert find_places("at Øresund Hall tomorrow", spec)[0].value == "Øresund Hall"


def test_a_list_of_people_reads_the_same_however_it_is_joined():
    from datetime import date

    from agents.policies.detect import normalise

    spec = SlotSpec(name="attendees", type="person")
    today = date(2027, 3, 1)
    assert normalise("Björn and Aroha", spec, today=today) == "Björn, Aroha"
    assert normalise("Zoë & Søren", spec, today=today) == "Zoë, Søren"
    assert normalise("林美, Olúmìdé und Łukasz", spec, today=today) == "林美, Olúmìdé, Łukasz"


def test_a_clause_led_by_a_verb_in_ing_gives_the_one_open_free_text_slot():
    from datetime import date

    specs = [
        SlotSpec(name="service", cues=("of the",)),
        SlotSpec(name="duration_minutes", type="number", units=("minutes",)),
    ]
    text = "Incident report — for the outage, affecting the Zahlungs-API, lasting twelve minutes."
    found = detect(text, specs, today=date(2027, 3, 1))
    assert found["service"].value == "Zahlungs-API"
    assert found["duration_minutes"].value == "12"
    # a clause with a number in it is something else ("lasting twelve minutes")
    assert "service" not in detect("Report, lasting twelve minutes.", specs, today=date(2027, 3, 1))


def test_a_known_city_is_found_inside_a_run_of_capitalised_words():
    from agents.policies.detect_names import find_known_places

    assert [f.value for f in find_known_places("Plan Malmö for a handful of people")] == ["Malmö"]


def test_a_group_named_by_what_it_is_attends():
    from agents.policies.detect_names import find_people

    spec = SlotSpec(name="attendees", type="person")
    found = find_people("a brief: on 21 April; with the design team; about the roadmap.", spec)
    assert [f.value for f in found] == ["the design team"]
    assert [f.value for f in find_people("with Zoë and Søren", spec)] == ["Zoë, Søren"]


def test_a_venue_is_what_follows_its_cue_with_its_own_noun():
    from datetime import date

    specs = [SlotSpec(name="venue", type="place", cues=("at", "in"))]
    today = date(2027, 3, 1)

    def venue(text: str) -> str:
        return detect(text, specs, today=today)["venue"].value

    assert (
        venue("on 24 March, at the rooftop at Ribeira, for 30 guests") == "the rooftop at Ribeira"
    )
    assert venue("a party at Gamla Stan hall.") == "Gamla Stan hall"
    assert venue("at our garden on 15 April 2027") == "our garden"
    assert venue("at Café Müller, for 20 guests") == "Café Müller"
    assert venue("drinks in Kraków tomorrow") == "Kraków"


def test_another_slots_choice_is_not_free_text():
    from datetime import date

    specs = [
        SlotSpec(name="product", cues=("for",)),
        SlotSpec(
            name="audience",
            type="choice",
            choices=("customers", "developers"),
            choice_aliases={"developers": ("devs",)},
        ),
    ]
    found = detect("Release notes for developers, shipping soon", specs, today=date(2027, 3, 1))
    assert "product" not in found
    assert found["audience"].value == "developers"


def test_today_as_the_wish_for_the_work_is_only_a_guess_at_a_date():
    from datetime import date

    today = date(2027, 3, 1)
    assert find_dates("No rush, but today would be lovely.", today=today)[0].confidence < 0.5
    assert find_dates("The outage happened today.", today=today)[0].confidence >= 0.9


def test_a_labelled_list_of_people_keeps_every_name_however_it_is_joined():
    meeting = get_template("meeting_brief").slots

    def attendees(text: str) -> str:
        return detect(text, meeting, today=TODAY)["attendees"].value

    assert attendees("Attendees: Zoë and Søren") == "Zoë, Søren"
    assert attendees("Attendees: Olúmìdé Bello, Łukasz & Mei Lin 林美. Lunch after.") == (
        "Olúmìdé Bello, Łukasz, Mei Lin 林美"
    )
    # the list ends before a lower-case clause
    assert attendees("Attendees: Zoë and Søren, then lunch") == "Zoë, Søren"


def test_names_joined_by_a_cue_word_keep_the_name_before_it():
    spec = SlotSpec(name="attendees", type="person", cues=("with", "and"))

    def people(text: str) -> str:
        return detect(text, [spec], today=TODAY)["attendees"].value

    assert people("Scope: Zoë and Søren.") == "Zoë, Søren"
    assert people("Øystein, Łukasz and Ana will come") == "Øystein, Łukasz, Ana"
    # a weekday before "and" is no name
    assert people("Notes from Monday and Ana") == "Ana"


def test_a_topic_keeps_the_period_it_is_for_but_not_the_people_it_is_for():
    meeting = get_template("meeting_brief").slots

    def purpose(text: str) -> str:
        return detect(text, meeting, today=TODAY)["purpose"].value

    assert purpose("A brief about the hiring plan for spring.") == "the hiring plan for spring"
    assert purpose("About the Straßenbahn roadmap for 2027 with Zoë") == (
        "the Straßenbahn roadmap for 2027"
    )
    assert purpose("About the budget for the board.") == "the budget"
    assert purpose("About the café for the summer issue.") == "the café"


@pytest.mark.parametrize(
    ("kind", "text", "slot", "value"),
    [
        ("travel_plan", "The travelers should be 5.", "travelers", "5"),
        ("travel_plan", "Budget must be €900, not more.", "budget", "EUR 900"),
        ("blog_post", "The topic should be pricing pages.", "topic", "pricing pages"),
        (
            "meeting_brief",
            "The meeting date needs to be 4 March 2026.",
            "meeting_date",
            "2026-03-04",
        ),
    ],
)
def test_a_value_said_as_a_wish_or_a_correction_is_read(kind, text, slot, value):
    assert detected(kind, text).get(slot) == value


def test_should_be_without_a_label_before_it_reads_nothing_as_that_slot():
    assert "topic" not in detected("blog_post", "It should be fixed by Friday.")


@pytest.mark.parametrize(
    "text",
    [
        "- Van: Hire-A-Van, £145, booked 08:00-14:00",
        "Movers: Two Guys, £320 for the day",
        "- Removal van (quote): £145",
    ],
)
def test_a_price_that_belongs_to_something_else_is_not_the_budget(text):
    assert "budget" not in detected("project_plan", text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Budget for the move: £900 max.", "GBP 900"),
        ("We can spend £300 on the whole move.", "GBP 300"),
        ("- Van: Hire-A-Van, £145\nWe have £500 overall for the move.", "GBP 500"),
    ],
)
def test_an_amount_that_is_the_budget_still_is(text, value):
    assert detected("project_plan", text)["budget"] == value


def test_a_known_place_that_begins_an_organisations_name_is_not_where_the_work_is():
    assert "location" not in detected("project_plan", "Spring meeting of the Riverside Book Club")
    assert "location" not in detected("project_plan", "Riverside book club 10th birthday")
    assert (
        detected("project_plan", "Move the office to Riverside by June")["location"] == "Riverside"
    )


def test_a_long_weekend_is_two_nights_only_when_no_number_of_nights_is_said():
    assert detected("travel_plan", "A long weekend in Porto")["nights"] == "2"
    said = detected("travel_plan", "A long weekend in Porto, the Airbnb for 3 nights")
    assert said["nights"] == "3"
