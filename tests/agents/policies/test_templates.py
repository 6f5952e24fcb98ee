from __future__ import annotations

import pytest

from agents.policies.base import SLOT_TYPES
from agents.policies.templates import (
    TemplateError,
    get_template,
    guess_template,
    load_template_file,
    load_templates,
    parse_template,
)

SHIPPED = {"travel_plan", "related_work", "meeting_brief", "blog_post", "lesson_plan"}


def test_the_five_shipped_templates_load_and_validate():
    templates = load_templates()

    assert set(templates) >= SHIPPED
    for template in templates.values():
        assert template.title
        assert template.required, f"{template.kind} has no required slot"
        for spec in template.slots:
            assert spec.type in SLOT_TYPES
            assert spec.question.endswith("?"), f"{template.kind}.{spec.name}"
            if spec.default is not None and spec.choices:
                assert spec.default in spec.choices


def test_shipped_templates_use_every_slot_type():
    used = {spec.type for t in load_templates().values() for spec in t.slots}

    assert used == set(SLOT_TYPES)


def test_choice_aliases_are_parsed_per_choice():
    pace = get_template("travel_plan").slot("pace")

    assert pace is not None
    assert pace.choices == ("relaxed", "balanced", "packed")
    assert "laid-back" in pace.choice_aliases["relaxed"]
    assert pace.default == "balanced"


def test_an_unknown_template_kind_is_an_error():
    with pytest.raises(TemplateError, match="no task template"):
        get_template("tax_return")


@pytest.mark.parametrize(
    ("slot", "message"),
    [
        ({"name": "when", "type": "datetime"}, "type must be one of"),
        ({"name": "pace", "type": "choice", "choices": ["slow"]}, "at least two choices"),
        (
            {"name": "pace", "type": "choice", "choices": ["a", "b"], "default": "c"},
            "not one of the choices",
        ),
        ({"name": "Bad Name"}, "snake_case"),
        ({"name": "x", "colour": "red"}, "unknown keys"),
        ({"name": "x", "weight": 3}, "weight"),
        (
            {"name": "x", "type": "choice", "choices": ["a", "b"], "choice_aliases": {"c": ["z"]}},
            "unknown choice",
        ),
    ],
)
def test_a_bad_slot_is_refused_with_a_reason(slot, message):
    with pytest.raises(TemplateError, match=message):
        parse_template({"kind": "demo", "title": "Demo", "slots": [slot]})


def test_duplicate_slot_names_are_refused():
    with pytest.raises(TemplateError, match="unique"):
        parse_template({"kind": "demo", "title": "Demo", "slots": [{"name": "a"}, {"name": "a"}]})


def test_a_template_file_must_be_valid_toml_named_after_its_kind(tmp_path):
    broken = tmp_path / "demo.toml"
    broken.write_text("kind = 'demo\n", encoding="utf-8")
    misnamed = tmp_path / "other.toml"
    misnamed.write_text("kind = 'demo'\ntitle = 'Demo'\n[[slots]]\nname = 'a'\n", encoding="utf-8")

    with pytest.raises(TemplateError, match=r"demo\.toml"):
        load_template_file(broken)
    with pytest.raises(TemplateError, match="must match the file name"):
        load_template_file(misnamed)


@pytest.mark.parametrize(
    ("request_text", "kind"),
    [
        ("Help me plan my holiday in Greece", "travel_plan"),
        ("Draft the related work for our paper", "related_work"),
        ("Prepare an agenda for Monday's sync", "meeting_brief"),
        ("Write a blog post on our launch", "blog_post"),
        ("I need a lesson on fractions for my students", "lesson_plan"),
        ("Summarise this spreadsheet", None),
    ],
)
def test_a_free_form_request_suggests_the_matching_template(request_text, kind):
    template = guess_template(request_text)

    assert (template.kind if template else None) == kind
