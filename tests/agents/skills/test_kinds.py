"""Kinds of task are data files: at least twelve, each with its slots, sections, checklist,
risks and effort; a bad file is refused naming the problem."""

from __future__ import annotations

import pytest

from agents.policies.templates import TemplateError, guess_template, load_templates, parse_template
from agents.skills.understand import guess_kind


def test_at_least_twelve_kinds_ship_each_with_sections_checklist_risks_and_effort() -> None:
    kinds = load_templates()

    assert len(kinds) >= 12
    for kind in kinds.values():
        assert kind.sections, kind.kind
        assert kind.checklist, kind.kind
        assert kind.risks, kind.kind
        assert kind.effort is not None, kind.kind


def test_a_placeholder_naming_no_slot_is_refused() -> None:
    data = {
        "kind": "bad",
        "title": "Bad",
        "slots": [{"name": "when", "type": "date"}],
        "checklist": [{"text": "Book it for {venue}"}],
    }

    with pytest.raises(TemplateError, match="unknown placeholders"):
        parse_template(data)


def test_the_new_kinds_are_for_the_skills_not_for_the_policys_guess() -> None:
    # the policy still treats "plan the offsite" as free-form (its questions unchanged) ...
    assert guess_template("Plan the team offsite in June") is None
    # ... while the skills draft it as an event
    kind = guess_kind("Plan the team offsite in June")
    assert kind is not None
    assert kind.kind == "event_plan"
