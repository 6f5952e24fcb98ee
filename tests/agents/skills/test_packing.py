"""A packing list for a task of no known kind: what its notes and chat say to bring, then what
its own activities imply, marked as suggestions; nothing invented; and, when the task says
neither, one plain sentence saying what it needs to know."""

from __future__ import annotations

import re

from agents import skills
from agents.skills.grounding import unknown_values
from tests.agents.skills.tasks import context

CAMPING = ("Lake District camping", "Two nights camping near Keswick with Rosa and Idris.")
CAMPING_NOTES = (
    "## Notes\n- Campsite booked, pitch 14\n- Saturday: hike up Catbells if dry\n"
    "- To bring: stove, gas canister and the big cool box\n"
)


def _packing(title: str, goal: str, request: str, **kwargs: object) -> tuple[str, str]:
    routed, answer, facts = skills.respond(context(title, goal, request, **kwargs))  # type: ignore[arg-type]
    assert not unknown_values(answer.text, facts)  # no date, number or name of unknown origin
    return routed.skill, answer.text


def _items(text: str) -> list[str]:
    return [line for line in text.splitlines() if re.match(r"^\s*(?:\d+\.|- \[ \])\s", line)]


def test_a_packing_list_lists_what_the_notes_say_to_bring_as_facts() -> None:
    skill, text = _packing(*CAMPING, "@Assistant packing list please", document=CAMPING_NOTES)
    assert skill == "checklist"
    items = _items(text)
    stated = [i for i in items if "(from the notes)" in i]
    assert [re.sub(r"^- \[ \] ", "", i).split(" (")[0] for i in stated] == [
        "Stove",
        "Gas canister",
        "The big cool box",
    ]
    assert not any("suggested" in i for i in stated)


def test_what_the_tasks_activities_imply_is_marked_as_a_suggestion_with_its_reason() -> None:
    _, text = _packing(*CAMPING, "what should we pack?", document=CAMPING_NOTES)
    items = _items(text)
    walking = next(i for i in items if "Walking shoes" in i)
    assert "suggested" in walking
    assert "hike" in walking
    assert any("sleeping bag" in i.lower() and "suggested" in i for i in items)
    # not implied by anything the task says: no swimwear, no passport
    assert not re.search(r"(?i)swimwear|passport|boarding", text)


def test_a_thing_the_notes_already_list_is_not_suggested_again() -> None:
    notes = "- Bring: tent pegs, a torch\n- Hike on Sunday\n"
    _, text = _packing(*CAMPING, "packing list", document=notes)
    assert text.lower().count("torch") == 1


def test_what_the_chat_says_to_bring_is_listed_from_the_chat() -> None:
    _, text = _packing(
        *CAMPING, "packing list pls", chat=("Idris: I'll bring the spare tarp and mallet",)
    )
    assert any("spare tarp" in i and "(from the chat)" in i for i in _items(text))


def test_a_packing_list_on_a_task_that_says_nothing_of_the_trip_says_so_once() -> None:
    skill, text = _packing(
        "Sort out the shed", "Clear the shed before the skip comes.", "pack list?"
    )
    assert skill == "checklist"
    assert _items(text) == []
    assert text.count("packing list") == 1
    assert "what it involves" in text


def test_a_packing_list_keeps_to_the_count_asked_for() -> None:
    _, text = _packing(*CAMPING, "5 things to pack", document=CAMPING_NOTES)
    assert len(_items(text)) == 5


def test_a_checklist_on_a_free_form_task_is_still_the_tasks_checklist() -> None:
    _, text = _packing(*CAMPING, "make a checklist", document=CAMPING_NOTES)
    assert text.startswith("Checklist for")
    assert "suggested: the task mentions" not in text
