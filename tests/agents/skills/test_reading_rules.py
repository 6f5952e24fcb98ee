"""The small reading rules behind the skills' answers: a budget divided by the count the task
gives, goal parts without their bare values, a place only with a place cue, to-do lists split
one per thing, a title from the task's own subject, and a count that opens "3 students get EAL
support" read as a part of the group, not its size."""

from __future__ import annotations

from datetime import date

from agents import skills
from agents.policies.situation import build_situation
from agents.policies.templates import get_template
from agents.skills.notes import noted
from agents.skills.understand import goal_parts
from tests.agents.skills.tasks import context

TODAY = date(2026, 12, 4)
LAPTOPS = ("Laptops", "8 laptops for the data team by 30 April 2027, budget €12,000 total.")


def _text(title: str, goal: str, request: str, **kwargs: object) -> str:
    return skills.respond(context(title, goal, request, **kwargs))[1].text  # type: ignore[arg-type]


def test_a_budget_per_thing_is_the_budget_divided_by_the_count_the_task_gives() -> None:
    text = _text(*LAPTOPS, "what's the budget per laptop?")
    assert "about 1,500 EUR per laptop: 12,000 EUR for 8 laptops (worked out from the task)" in (
        text
    )


def test_whether_a_budget_is_enough_is_not_guessed() -> None:
    text = _text(*LAPTOPS, "does the budget cover this?")
    assert "Whether it is enough I can't tell" in text
    assert "per laptop" not in text


def test_a_budget_per_thing_the_task_does_not_count_is_not_worked_out() -> None:
    text = _text(*LAPTOPS, "what's the budget per monitor?")
    assert "worked out" not in text


def test_goal_parts_keep_the_things_and_drop_bare_values() -> None:
    assert goal_parts("8 laptops for the data team by 30 April 2027", today=TODAY) == (
        "8 laptops for the data team",
    )
    assert goal_parts("Get new laptops, budget €14,000 total", today=TODAY) == ("new laptops",)
    parts = goal_parts("We are 28 people. 3 need vegetarian meals.", today=TODAY)
    assert parts == ()


def test_a_part_that_points_back_at_the_task_is_no_part() -> None:
    assert goal_parts("Write it for members; send by 30 January 2027.", today=TODAY) == ()
    assert goal_parts("Quarterly newsletter", today=TODAY) == ("quarterly newsletter",)


def test_a_title_never_starts_from_a_pronoun() -> None:
    text = _text("Quarterly newsletter", "Write it for members; send by 30 January 2027.", "title?")
    assert "It for members" not in text
    assert "Quarterly newsletter" in text


def test_a_list_of_people_holds_no_place_but_in_porto_is_one() -> None:
    facts = skills.facts_from_context(context("Offsite", "Team: Farah, Bo, Porto", "where?"))
    assert not list(facts.of_type("place"))
    facts = skills.facts_from_context(context("Offsite", "A two-day offsite in Porto.", "where?"))
    assert [v.raw for v in facts.of_type("place")] == ["Porto"]


def test_a_to_do_list_of_things_is_one_item_per_thing_with_its_brackets() -> None:
    items = noted("- Equipment: gloves, bags (30 large, 10 small), hi-vis vests", (), "todo")
    assert len(items) == 3
    assert any("bags (30 large, 10 small)" in item for item in items)


def test_a_count_of_some_of_the_group_is_not_the_groups_size() -> None:
    situation = build_situation(
        request="Plan a lesson on fractions for 28 students.",
        template=get_template("lesson_plan"),
        document="# Lesson\n\n3 students get EAL support.\n",
        today=TODAY,
    )
    assert situation.conflicts == ()
    assert situation.slot("class_size").value == "28"


def test_a_count_of_the_whole_group_in_the_document_still_conflicts() -> None:
    situation = build_situation(
        request="Plan a lesson on fractions for 28 students.",
        template=get_template("lesson_plan"),
        document="# Lesson\n\nClass size: 30 students.\n",
        today=TODAY,
    )
    assert [c.slot for c in situation.conflicts] == ["class_size"]


def test_a_title_that_says_what_the_task_is_about_gives_its_subject() -> None:
    ctx = context(
        "Year 9 — Introduction to climate change",
        "60-minute lesson for 28 students on Thursday 28 January 2027",
        "@Assistant draft the lesson plan",
        template="lesson_plan",
    )
    facts = skills.facts_from_context(ctx)
    assert [v.raw for v in facts.known if v.slot == "subject"] == ["Introduction to climate change"]
    assert skills.respond(ctx)[1].suggestion is not None  # drafts; asks nothing


def test_a_title_of_the_kinds_own_words_names_no_subject() -> None:
    facts = skills.facts_from_context(
        context(
            "Quarterly newsletter", "Send it by 30 January 2027.", "draft", template="newsletter"
        )
    )
    assert not [v for v in facts.known if v.slot == "topic"]


def _note(text: str, person_id: int = 1) -> dict[str, object]:
    return {
        "item_id": 7,
        "person_id": person_id,
        "person_name": "alice",
        "key": "",
        "value": "",
        "scope": "global",
        "kinds": [],
        "text": text,
        "shared": False,
    }


def test_a_memory_item_in_the_persons_own_words_gives_its_value() -> None:
    ctx = context(
        "Blog post",
        "A post about index funds versus ETFs.",
        "@Assistant write the post",
        template="blog_post",
        memory=(_note("My blog readers are total beginners to investing."),),
    )
    facts = skills.facts_from_context(ctx)
    assert [v.raw for v in facts.known if v.slot == "audience"] == ["beginners"]


def test_someone_elses_memory_item_gives_nothing() -> None:
    ctx = context(
        "Blog post",
        "A post about index funds versus ETFs.",
        "@Assistant write the post",
        template="blog_post",
        memory=(_note("My blog readers are total beginners to investing.", person_id=2),),
    )
    facts = skills.facts_from_context(ctx)
    assert not [v for v in facts.known if v.slot == "audience"]


def test_a_preference_said_in_the_chat_is_acknowledged_part_by_part() -> None:
    asked, answer, _ = skills.respond(
        context(
            "Offsite", "Plan the offsite.", "@Assistant I prefer bullet points and British spelling"
        )
    )
    assert asked.skill == "preferences"
    assert answer.text == "Noted: bullet points and British spelling."


def test_a_request_for_work_is_no_preference() -> None:
    for request in ("@Assistant draft the plan", "what is still open?", "give me a checklist"):
        assert skills.respond(context("Offsite", "Plan the offsite.", request))[0].skill != (
            "preferences"
        ), request


def test_what_students_can_do_by_the_end_is_the_learning_goal() -> None:
    situation = build_situation(
        request="Plan a 60-minute lesson; by the end students can explain the greenhouse effect.",
        template=get_template("lesson_plan"),
        today=TODAY,
    )
    assert situation.slot("learning_goal").value == "explain the greenhouse effect"


def test_a_title_s_subject_is_the_side_with_words_of_its_own() -> None:
    from agents.policies.situation_sources import title_subject

    generic = ["Job", "posting", "job ad", "hiring"]
    assert title_subject("Job ad: data analyst", generic) == "data analyst"
    assert title_subject("Data analyst — job ad", generic) == "Data analyst"


def test_a_word_that_opens_a_phrase_is_not_the_town_of_its_name() -> None:
    from agents.policies.detect_names import find_known_places

    assert [f.value for f in find_known_places("Must: Excel\nNice to have: Power BI")] == []
    assert [f.value for f in find_known_places("- Split the bill")] == []
    assert [f.value for f in find_known_places("Trip to Nice in May")] == ["Nice"]
    assert [f.value for f in find_known_places("Paris to Lyon by train")] == ["Paris", "Lyon"]
