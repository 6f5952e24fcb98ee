"""Preferences enforced on the agent's output (agents/policies/style.py) and the bridge that
applies only the requester's, for this kind of work."""

from __future__ import annotations

import pytest

from agents.engine.policies_bridge import restyled_actions
from agents.policies.emphasis import bold_numbers
from agents.policies.memory_facts import MemoryFact
from agents.policies.style import (
    enforce,
    preferences,
    prompt_hints,
    reformat_dates,
    respell,
    restyle_actions,
    restyle_lists,
)


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


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Budget: €1,500 for two.", "Budget: **€1,500** for two."),
        ("Budget: 1.500,00 € or CHF 1'200", "Budget: **1.500,00 €** or **CHF 1'200**"),
        (
            "About 250 Swiss francs, $2k or 1 200 zł",
            "About **250 Swiss francs**, **$2k** or **1 200 zł**",
        ),
        (
            "12 travelers for 45 minutes, 15% off",
            "**12 travelers** for **45 minutes**, **15%** off",
        ),
        ("Servings: 4", "Servings: **4**"),
        ("- Meeting date: 2027-04-14", "- Meeting date: **2027-04-14**"),
        ("When: 4 March 2027.", "When: **4 March 2027**."),
        (
            "Zürich: 3 Nächte für 2 Personen, 東京 5 km",
            "Zürich: **3** Nächte für **2** Personen, 東京 **5 km**",
        ),
    ],
)
def test_key_numbers_are_bold_with_their_unit_or_currency(text, expected):
    assert bold_numbers(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Severity: SEV3, Q3 goals, COVID-19, the 12th, Python 3",  # digits inside words, names
        "Day 1: arrive. Year 9 class, version 8.6",  # identifiers
        "On 2027-03-04, 4 March 2027, March 4, 2027, 03/04 at 15:30 or 3pm, in 2027",  # dates
        "Meeting date: 2027-04-14, then lunch",  # a date in a sentence, even after a label
        "TL;DR: Brief for Tom: 2027-04-14, Zoë, Søren.",
        "# Budget 1500",  # a heading
        "`limit = 5` and [page 5](https://example.com/5)",  # code and links
        "Already **€1,500** and *5 days*",  # emphasised already
    ],
)
def test_dates_headings_codes_and_digits_inside_words_stay_as_they_are(text):
    assert bold_numbers(text) == text


def test_numbers_are_never_bold_twice_and_list_markers_are_not_numbers():
    text = "# Plan for 2027\n\n1. Book 2 rooms\n2. Pay €300\n\n```\nretries = 3\n```\n"
    once = bold_numbers(text)

    assert (
        once == "# Plan for 2027\n\n1. Book **2 rooms**\n2. Pay **€300**\n\n```\nretries = 3\n```\n"
    )
    assert bold_numbers(once) == once
    assert enforce(once, {"bold_numbers": "yes"}) == once


def test_bold_numbers_is_read_from_its_key_a_number_format_or_the_words_of_an_item():
    def fact(key, value="", text=""):
        return MemoryFact(1, 7, "Zoë", key=key, value=value, scope="global", text=text)

    assert preferences([fact("bold_numbers", "yes")]) == {"bold_numbers": "yes"}
    assert preferences([fact("number_format", "bold")])["bold_numbers"] == "yes"
    # an item kept without a structured key (or with one of its own) is read by its words
    assert preferences([fact("", text="Mets les chiffres… put the figures in bold")]) == {
        "bold_numbers": "yes"
    }
    assert preferences([fact("emphasis", "numbers", "Don't bold the numbers")]) == {
        "bold_numbers": "no"
    }
    # the newest wins, and nothing else is read from words
    assert preferences([fact("bold_numbers", "yes"), fact("bold_numbers", "no")]) == {
        "bold_numbers": "no"
    }
    assert preferences([fact("tldr", "yes", "Start with a TL;DR")]) == {}
    assert enforce("€5", {"bold_numbers": "no"}) == "€5"


def test_the_output_step_bolds_the_numbers_of_a_reply_and_an_edit_not_its_assumption():
    actions = [
        {"kind": "edit", "find": "Budget: €2,000", "replace": "Budget: €1,500", "text": ""},
        {"kind": "reply", "text": "Done: 12 travelers."},
    ]
    out = restyle_actions(
        actions, {"bold_numbers": "yes"}, assumption="I assumed the budget is 1500 EUR."
    )

    assert out[0]["find"] == "Budget: €2,000"
    assert out[0]["replace"] == "Budget: **€1,500**"
    assert out[1]["text"] == "Done: **12 travelers**.\n\nI assumed the budget is 1500 EUR."
