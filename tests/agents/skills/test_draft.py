"""The draft skill: a first version of the document as a suggestion, every known value in
place, open values as visible placeholders, assumptions said, an existing document extended."""

from __future__ import annotations

import pytest

from agents import skills
from agents.policies.templates import load_templates
from agents.skills.grounding import unknown_values
from tests.agents.skills.tasks import BLOG, MEETING, OFFSITE, SUPPORT, context, preference


def _draft(title: str, goal: str, **kwargs: object) -> tuple[skills.TaskFacts, str]:
    facts = skills.facts_from_context(context(title, goal, "draft the document", **kwargs))  # type: ignore[arg-type]
    answer = skills.draft(facts)
    assert answer.suggestion is not None, answer.text
    return facts, answer.suggestion.replace


def test_a_draft_of_a_known_kind_has_its_sections_with_every_known_value() -> None:
    facts, text = _draft(*OFFSITE)

    assert facts.kind is not None
    assert facts.kind.kind == "event_plan"
    for section in ("## Overview", "## Programme", "## Venue and logistics", "## Budget"):
        assert section in text
    assert "Date: Saturday 12 June 2027" in text
    assert "Attendees: 25 people" in text
    assert "Venue: Lisbon" in text
    assert "Budget: 2,000 GBP" in text


def test_open_values_are_visible_placeholders_and_open_decisions() -> None:
    _, text = _draft("Team offsite", "Plan the team offsite for 25 people.")

    assert "Venue: to decide" in text
    assert "## Open decisions" in text
    assert "Where will it be held?" in text


def test_a_weekday_is_an_assumed_date_said_as_such() -> None:
    facts, text = _draft(*MEETING)
    answer = skills.draft(facts)

    assert "Meeting date: Friday 11 December 2026 (assumed from “Friday”)" in text
    assert "## Assumptions" in text
    assert "I assumed" in answer.text
    assert "Attendees: Ana, Ben, Carla, Dev, Eve" in text
    assert "Duration: 30 minutes" in text


def test_an_existing_document_is_extended_never_overwritten() -> None:
    document = "# Team offsite\n\n## Programme\n- Day 1: strategy with Ana\n"

    facts = skills.facts_from_context(context(*OFFSITE, "draft it", document=document))
    suggestion = skills.draft(facts).suggestion

    assert suggestion is not None
    assert suggestion.find == ""  # appended: nothing of the document is replaced
    assert "## Programme" not in suggestion.replace  # the section it has is left alone
    assert "## Budget" in suggestion.replace


def test_a_document_of_headings_only_is_filled_in() -> None:
    skeleton = load_templates()["meeting_brief"].skeleton

    facts = skills.facts_from_context(
        context(*MEETING, "draft it", template="meeting_brief", document=skeleton)
    )
    suggestion = skills.draft(facts).suggestion

    assert suggestion is not None
    assert suggestion.find == skeleton.strip()
    assert "## Purpose\n- Purpose: to decide" in suggestion.replace


def test_a_task_of_no_known_kind_gets_its_goals_own_parts_as_sections() -> None:
    facts, text = _draft(*SUPPORT)

    assert facts.kind is None
    assert facts.parts == ("new laptops for the support team", "shared calendar", "short training")
    for heading in (
        "## New laptops for the support team",
        "## Shared calendar",
        "## Short training",
    ):
        assert heading in text
    assert "Deadline: June 2027" in text
    assert text.count("Done by: June 2027") == 3


def test_preferences_shape_the_draft() -> None:
    memory = (preference("date_format", "iso"), preference("headings", "no"))

    _, text = _draft(*OFFSITE, memory=memory)

    assert "Date: 2027-06-12" in text
    assert "## " not in text
    assert "**Budget**" in text


TASKS = [
    OFFSITE,
    MEETING,
    SUPPORT,
    BLOG,
    (
        "Move to the new office",
        "Move the Berlin office to Kreuzberg by 30 March 2027 for 40 staff, budget €15,000.",
    ),
    (
        "Hire a support engineer",
        "Job posting for a support engineer in Madrid, salary €40,000 to €48,000.",
    ),
    ("Quarterly report", "Q3 sales report for the board, due 15 January 2027."),
    ("Database restore", "Runbook for restoring the orders database."),
    ("Garden", "Plant tomatoes, build a compost bin and fix the fence before April."),
    ("Launch newsletter", "Newsletter about the spring launch to all customers, sent on 3 March."),
    ("Kitchen rota", "A rota for the office kitchen with Priya, Tom and Lea."),
    ("Grant", "Proposal for a 5,000 EUR community grant, decision by Maria on 1 February."),
    ("Science lesson", "Lesson on photosynthesis for year 9, 50 minutes."),
    ("Trip to Porto", "Trip to Porto for 4 people from 2 May to 6 May, budget 1,200 EUR."),
]


@pytest.mark.parametrize(("title", "goal"), TASKS)
def test_no_draft_carries_a_value_of_unknown_origin(title: str, goal: str) -> None:
    facts, text = _draft(title, goal)

    assert unknown_values(text, facts) == []
    assert unknown_values(skills.draft(facts).text, facts) == []


def test_the_scan_finds_a_value_nobody_gave() -> None:
    facts, text = _draft(*OFFSITE)

    found = unknown_values(text + "\n- Budget: 3,500 GBP, with Roberto in Porto on Monday", facts)

    assert set(found) == {"3500", "Monday", "Roberto", "Porto"}
