"""The document's and chat's own notes in the skills' work (agents/skills/notes.py): a draft
carries them, a checklist takes their to-dos, risks what they flag, open questions what they
leave open; always as written, so nothing is invented."""

from __future__ import annotations

from agents import skills
from agents.skills.grounding import unknown_values
from agents.skills.notes import carry_notes, noted
from tests.agents.skills.tasks import context

TITLE, GOAL = "Warehouse move", "Move the spare-parts store to the new unit by 30 June 2027."
NOTES = (
    "## Notes\n- Budget: 6,500 EUR for vans and crates\n- We still need: crates, tape and labels\n"
    "- The lift at the new unit is out of order until May\n- Forklift licence: who holds one?\n"
)


def _respond(request: str, **kwargs: object) -> skills.SkillAnswer:
    return skills.respond(context(TITLE, GOAL, request, document=NOTES, **kwargs))[1]  # type: ignore[arg-type]


def test_a_draft_carries_the_notes_as_written() -> None:
    answer = _respond("@Assistant draft the plan")
    assert answer.suggestion is not None
    text = answer.suggestion.replace
    assert "- We still need: crates, tape and labels" in text
    assert "- The lift at the new unit is out of order until May" in text
    facts = skills.facts_from_context(context(TITLE, GOAL, "draft the plan", document=NOTES))
    assert unknown_values(text, facts) == []


def test_a_note_takes_the_place_of_the_drafts_line_of_its_label() -> None:
    sections = [("Costs", ["- Budget: 6,500 EUR", "- _To write: the costs._"]), ("Plan", [])]
    out = carry_notes(sections, "- Budget: 6,500 EUR for vans and crates\n- Plan: three trips\n")
    assert out[0][1] == ["- Budget: 6,500 EUR for vans and crates", "- _To write: the costs._"]
    assert out[1][1] == ["- Plan: three trips"]


def test_a_checklist_takes_the_notes_to_dos_one_per_thing() -> None:
    text = _respond("@Assistant checklist please").text
    for thing in ("crates", "tape", "labels"):
        assert f"We still need: {thing}" in text


def test_risks_name_what_the_notes_flag() -> None:
    text = _respond("@Assistant what could go wrong?").text
    assert "The lift at the new unit is out of order until May: a risk if nothing changes" in text


def test_open_questions_start_with_what_people_left_open() -> None:
    chat = ("tom: saturday or sunday for the big trip?",)
    text = _respond("@Assistant what's still open?", chat=chat).text
    lines = text.splitlines()
    assert lines[1] == "1. Forklift licence: who holds one?"
    assert "tom: saturday or sunday for the big trip?" in text


def test_a_label_or_a_plain_fact_is_no_to_do_risk_or_open_point() -> None:
    document = "Issues so far\n- Team of 6 movers\n- Start at 8:00 at the old unit\n"
    for cue in ("todo", "risk", "open"):
        assert noted(document, (), cue) == []
