"""A place after "from" where a journey starts ("flights from Stansted", "leaving from Gatwick")
is the trip's origin, never a person the task names."""

from __future__ import annotations

from agents import skills
from agents.policies.detect_names import find_origins
from tests.agents.skills.tasks import context

TRIP = ("Bilbao in March", "Three nights in Bilbao for the two of us, flights from Stansted.")


def _facts(title: str, goal: str, request: str = "", **kwargs: object) -> skills.TaskFacts:
    return skills.facts_from_context(context(title, goal, request, **kwargs))  # type: ignore[arg-type]


def test_a_place_after_flights_from_is_the_origin_not_a_person() -> None:
    facts = _facts(*TRIP)
    assert "Stansted" not in facts.people
    origins = [v.raw for v in facts.known if v.label == "origin"]
    assert origins == ["Stansted"]


def test_leaving_from_in_the_notes_gives_an_origin_wherever_else_the_name_stands() -> None:
    notes = "- We're leaving from Gatwick on the 9th\n- Hotel: ask Maite from Gatwick desk\n"
    facts = _facts("Weekend away", "Plan the weekend.", document=notes)
    assert "Gatwick" not in facts.people
    assert any(v.label == "origin" and v.raw == "Gatwick" for v in facts.known)


def test_a_known_city_after_from_is_a_place_without_a_travel_word() -> None:
    found = [f.value for f in find_origins("Two colleagues are coming over from Manchester.")]
    assert found == ["Manchester"]


def test_a_person_after_from_is_still_a_person() -> None:
    facts = _facts("Leaving card", "Collect the money from Priya and Tomasz by Friday.")
    assert "Priya" in ", ".join(facts.people)


def test_who_is_coming_names_no_origin_and_where_says_where_it_starts() -> None:
    who = skills.respond(context(*TRIP, "who is coming?"))[1].text
    assert "Stansted" not in who
    where = skills.respond(context(*TRIP, "where is it?"))[1].text
    assert "in Bilbao" in where
    assert "from Stansted" in where
