"""Preferences enforced on the agent's output (agents/policies/style.py) and the bridge that
applies only the requester's, for this kind of work."""

from __future__ import annotations

import pytest

from agents.policies.style import (
    enforce,
    prompt_hints,
    reformat_dates,
    respell,
    restyle_actions,
    restyle_lists,
)
from agents.policies_bridge import restyled_actions


def test_american_text_is_respelled_british_and_back():
    british = "We organised the colour scheme at the centre, travelling with our favourite team."
    american = "We organized the color scheme at the center, traveling with our favorite team."

    assert respell(american, "british") == british
    assert respell(british, "american") == american


def test_respelling_keeps_case_words_that_only_look_alike_and_code():
    assert respell("Colour. EMPHASIS on `colour`", "american") == "Color. EMPHASIS on `colour`"
    assert respell("The program will check it", "british") == "The program will check it"
    assert respell("Zoë's café has colour", "american") == "Zoë's café has color"


def test_lists_follow_the_list_style():
    text = "Plan:\n- arrive\n- visit\n  - nested stays\n\nThen:\n* rest"
    assert restyle_lists(text, "numbered") == (
        "Plan:\n1. arrive\n2. visit\n  - nested stays\n\nThen:\n1. rest"
    )
    assert restyle_lists("1. a\n2) b", "bullets") == "- a\n- b"
    assert restyle_lists("- a", "prose") == "- a"


@pytest.mark.parametrize(
    ("style", "expected"),
    [
        ("iso", "From 2027-03-04 to 2027-05-05"),
        ("day_month_year", "From 4 March 2027 to 5 May 2027"),
        ("month_day_year", "From March 4, 2027 to May 5, 2027"),
    ],
)
def test_dates_follow_the_date_format(style, expected):
    assert reformat_dates("From 2027-03-04 to May 5, 2027", style) == expected


def test_preferences_without_a_rule_go_to_the_prompt():
    hint = prompt_hints({"tone": "formal", "length": "short", "spelling": "british"})

    assert hint == "Use a formal tone. Keep it short."
    assert enforce("colour", {"tone": "formal"}) == "colour"


def test_the_assumption_is_stated_in_the_action_when_the_model_left_it_out():
    actions = [{"kind": "edit", "text": "Drafted the plan", "find": "", "replace": "- a"}]

    out = restyle_actions(actions, {}, assumption="I assumed the start date is 4 May.")

    assert out[0]["text"] == "Drafted the plan\n\nI assumed the start date is 4 May."
    said = [{"kind": "reply", "text": "I assumed 4 May, tell me otherwise."}]
    assert restyle_actions(said, {}, assumption="I assumed the start date is 4 May.") == said


def _fact(person_id, key, value, kinds=()):
    return {
        "item_id": None,
        "person_id": person_id,
        "person_name": f"u{person_id}",
        "key": key,
        "value": value,
        "scope": "workspace",
        "kinds": list(kinds),
        "text": "",
        "shared": True,
    }


def test_the_output_step_applies_only_the_requesters_preferences_for_this_kind_of_work():
    context = {
        "task": {"template": "travel_plan"},
        "requested_by_id": 2,
        "memory_items": [
            _fact(1, "spelling", "american"),
            _fact(2, "spelling", "british"),
            _fact(2, "list_style", "numbered", kinds=("meeting_brief",)),
        ],
    }
    actions = [{"kind": "reply", "text": "The color plan:\n- a\n- b"}]

    out = restyled_actions(actions, context)

    assert out[0]["text"] == "The colour plan:\n- a\n- b"  # numbered is for meeting briefs
