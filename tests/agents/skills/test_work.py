"""The skills other than the draft: open questions ranked by how much they block, what to
decide first, the next step, summary, title, rephrasing, checklist, risks, effort and answers
about the task, each from the task's own values."""

from __future__ import annotations

import re

from agents import skills
from tests.agents.skills.tasks import BLOG, MEETING, OFFSITE, SUPPORT, context, preference


def _ask(title: str, goal: str, request: str, **kwargs: object) -> skills.SkillAnswer:
    return skills.respond(context(title, goal, request, **kwargs))[1]  # type: ignore[arg-type]


def test_open_questions_come_most_blocking_first_with_their_choices() -> None:
    text = _ask("Team meeting", "A meeting brief for the team.", "what is missing?").text

    lines = [line for line in text.splitlines() if re.match(r"\d\.", line)]
    assert lines[0].startswith("1. When is the meeting?")  # required, heaviest
    assert "Is it in person or remote?" not in text  # optional: not while required ones are open


def test_an_open_choice_comes_with_its_choices() -> None:
    text = _ask("Blog post", "A blog post about our new search feature.", "what is missing?").text

    assert "Who is it for? (beginners, practitioners, experts or general public)" in text


def test_a_number_of_questions_asked_for_is_the_number_given() -> None:
    text = _ask("Team meeting", "A meeting brief for the team.", "give me two questions").text

    assert len([line for line in text.splitlines() if re.match(r"\d\.", line)]) == 2


def test_nothing_the_goal_states_is_asked_about() -> None:
    text = _ask(*BLOG, "what is missing?").text

    assert "What is the post about?" not in text
    assert "Who is it for?" not in text


def test_what_to_decide_first_is_the_most_blocking_open_value() -> None:
    text = _ask(*MEETING, "what should we decide first?").text

    assert text.startswith("Decide the purpose first: What should the meeting decide or achieve?")


def test_summary_requests_in_other_words_reach_the_same_skill() -> None:
    for request in ("sum up", "in one line please", "tl;dr", "what's this about?"):
        asked, answer, _ = skills.respond(context(*OFFSITE, request))
        assert asked.skill == "summary", request
        assert "Lisbon" in answer.text
        assert "2,000 GBP" in answer.text


def test_a_one_line_summary_is_one_sentence() -> None:
    text = _ask(*SUPPORT, "in one line").text

    assert len(re.findall(r"[.!?](?:\s|$)", text)) == 1
    assert "new laptops for the support team" in text
    assert "June 2027" in text


def test_a_title_is_short_and_names_the_task() -> None:
    text = _ask(*OFFSITE, "suggest a title").text

    title = re.search(r"“(.+)”", text)
    assert title is not None
    assert len(title[1].split()) <= 8
    assert "offsite" in title[1].casefold()


def test_a_rephrasing_names_the_tasks_facts_in_sentences() -> None:
    text = _ask(*SUPPORT, "rephrase the goal").text

    assert "shared calendar" in text
    assert text.endswith(".")


def test_a_budget_gives_a_checklist_line_and_a_risk_against_that_figure() -> None:
    checklist = _ask(*OFFSITE, "make a checklist").text
    risks = _ask(*OFFSITE, "what could go wrong?").text

    assert "Track spending against the budget of 2,000 GBP" in checklist
    assert "Costs run over the budget of 2,000 GBP" in risks


def test_a_risk_about_a_value_nobody_gave_is_left_out() -> None:
    risks = _ask("Team offsite", "Plan the team offsite.", "list the risks").text

    assert "budget" not in risks.casefold()


def test_three_risks_are_three() -> None:
    text = _ask(*OFFSITE, "three risks please").text

    assert len([line for line in text.splitlines() if line.startswith("- ")]) == 3


def test_the_generic_checklist_comes_from_the_goals_parts_and_deadline() -> None:
    text = _ask(*SUPPORT, "checklist").text

    assert "New laptops for the support team: agree what is needed" in text
    assert "Shared calendar" in text
    assert "Short training" in text
    assert "Have everything done by June 2027" in text


def test_effort_is_from_the_kinds_data_scaled_by_a_known_count() -> None:
    text = _ask(*OFFSITE, "how long will this take?").text

    assert text.startswith("Rough effort: 6 to 12 hours")
    assert "for 25 people" in text


def test_answers_about_the_task_come_from_its_values() -> None:
    assert "Saturday 12 June 2027" in _ask(*OFFSITE, "when is it?").text
    who = _ask(*MEETING, "who is involved?").text
    assert "Ana, Ben, Carla, Dev and Eve" in who
    assert "No budget is given yet" in _ask(*MEETING, "what's the budget?").text


def test_a_request_no_skill_covers_gets_what_the_agent_can_do() -> None:
    asked, answer, _ = skills.respond(context(*OFFSITE, "write me a poem about cats"))

    assert asked.skill == ""
    assert answer.skill == "capabilities"
    assert "Draft, Open questions or Checklist" in answer.text


def test_preferences_apply_to_every_skill() -> None:
    memory = (
        preference("list_style", "numbered"),
        preference("spelling", "british"),
        preference("date_format", "iso"),
    )

    text = _ask(*OFFSITE, "what could go wrong?", memory=memory).text

    assert "\n1. " in text
    assert "2027-06-12" in text


def test_a_mention_of_the_agent_is_not_a_value() -> None:
    answer = _ask(*OFFSITE, "@Assistant what is missing?")

    assert "Assistant" not in answer.text


def test_a_question_about_an_action_part_reads_to_not_for() -> None:
    from agents.skills.understand import starts_with_verb

    assert starts_with_verb("decide whether to rent a van")
    assert starts_with_verb("Confirm the venue")
    assert not starts_with_verb("new laptops for the support team")
    assert not starts_with_verb("decision on the van")


def test_a_checklist_starts_with_what_the_notes_leave_to_do_and_to_settle() -> None:
    document = (
        "Move date: 27 June 2026\nVan: Hire-A-Van, booked 08:00-14:00, £145\n"
        "Old flat: keys back to agent by 17:00\n- broadband not sorted\n"
        "- who takes the sofa? disputed\n"
    )
    _, answer, _ = skills.respond(
        context("Flat move", "", "checklist for moving day", document=document)
    )
    items = [line for line in answer.text.splitlines() if line.startswith("- [ ]")]
    assert items[:3] == [
        "- [ ] Old flat: keys back to agent by 17:00",
        "- [ ] broadband not sorted",
        "- [ ] Settle: who takes the sofa? disputed",
    ]
