"""Scenario format 2: what it can say, what it refuses, and the shipped set built on it."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import pytest

from agents.evaluation.checks import passes
from agents.evaluation.scenario import ScenarioError, load_scenarios, parse_scenarios
from agents.evaluation.scenarios import generate_v2
from agents.policies import parse_money
from agents.policies.parse_numbers import digits_for_words
from tests.evaluation.v2data import tiny


def test_a_format_2_file_loads_with_its_templates_dates_and_categories() -> None:
    scenarios = parse_scenarios(tiny())
    assert scenarios.version == 2
    assert "recipe_card" in scenarios.templates
    by_id = {e.id: e for e in scenarios.episodes}
    assert by_id["zoe-trip"].weekday == "Friday"
    assert scenarios.day(by_id["soren-trip"]).isoformat() == "2027-03-08"
    assert by_id["zoe-trip"].source("budget") == "hidden"
    assert by_id["zoe-recipe"].source("servings") == "memory"
    assert by_id["soren-blog"].readings["audience"] == ("practitioners", "experts")
    assert by_id["soren-trip"].conflicts[0].slot == "budget"
    assert by_id["zoe-recipe"].template_def is not None
    assert by_id["zoe-recipe"].template_def.kind == "recipe_card"
    assert {e.kind for e in scenarios.episodes} == {
        "clear",
        "missing",
        "ambiguous",
        "contradictory",
    }


def test_a_format_1_file_reads_as_before_with_one_date_and_two_categories() -> None:
    scenarios = load_scenarios("default")
    assert scenarios.version == 1
    assert {e.kind for e in scenarios.episodes} == {"clear", "missing"}
    assert all(e.date == scenarios.today for e in scenarios.episodes)
    assert all(
        e.source(s) == ("request" if s in e.stated else "hidden")
        for e in scenarios.episodes
        for s in e.slots
    )


def _edit(path: str, value: Any) -> dict[str, Any]:
    data = tiny()
    target: Any = data
    parts = path.split("/")
    for part in parts[:-1]:
        target = target[int(part)] if part.isdigit() else target[part]
    last = parts[-1]
    if value is _DELETE:
        del target[last]
    else:
        target[int(last) if last.isdigit() else last] = value
    return data


_DELETE = object()


@pytest.mark.parametrize(
    ("path", "value", "message"),
    [
        ("episodes/0/weekday", "Monday", "is a Friday"),
        ("episodes/0/slots/travelers/evidence", "two adults", "is not in the request"),
        ("episodes/2/slots/budget/in", "memory", "holds no slot:budget"),
        ("episodes/1/blockers", ["dish"], "a clear episode has no blockers"),
        ("episodes/3/slots/audience/readings", ["experts", "beginners"], "not one of its readings"),
        ("episodes/2/conflicts", [], "needs a conflict"),
        ("episodes/0/blockers", ["destination"], "stated plainly"),
        ("templates/0/kind", "travel_plan", "is a shipped template"),
        ("episodes/0/date", _DELETE, "no date"),
    ],
)
def test_an_inconsistent_file_is_refused_naming_the_episode_and_the_problem(
    path: str, value: Any, message: str
) -> None:
    with pytest.raises(ScenarioError, match=message):
        parse_scenarios(_edit(path, value))


def test_an_announced_change_must_be_said_in_the_request() -> None:
    data = tiny()
    data["episodes"][1]["announces"] = [
        {
            "id": "zoe-bullets",
            "key": "list_style",
            "value": "bullets",
            "text": "Bullets from now on.",
        }
    ]
    with pytest.raises(ScenarioError, match="not in the request"):
        parse_scenarios(data)
    data["episodes"][1]["request"] += " Bullets from now on."
    assert parse_scenarios(data).episodes[1].announces[0].id == "zoe-bullets"


def test_the_schema_refuses_an_unknown_category_with_its_place() -> None:
    data = tiny()
    data["episodes"][0]["category"] = "vague"
    with pytest.raises(ScenarioError, match="episodes/0/category"):
        parse_scenarios(data)


def test_a_closing_remark_holds_from_the_next_episode_and_an_exemption_is_not_scored() -> None:
    # given a closing remark in Zoë's first episode and an exemption in her second
    data = tiny()
    data["episodes"][1]["exempt"] = ["tldr"]
    scenarios = parse_scenarios(data)
    held = scenarios.in_force()
    first, second = scenarios.episodes[0], scenarios.episodes[1]
    # then the remark's preference is not held in the first episode, but is in the second
    assert "zoe-numbered" not in {p.id for p in held[first.id]}
    assert "zoe-numbered" in {p.id for p in held[second.id]}
    # and the exempt key and out-of-scope preferences are not scored there
    scored = {p.id for p in scenarios.scored(second, held[second.id])}
    assert "zoe-tldr" not in scored
    assert "zoe-tldr" in {p.id for p in scenarios.scored(first, held[first.id])}
    assert "zoe-servings" not in {p.id for p in scenarios.scored(first, held[first.id])}


def test_splits_select_their_episodes_and_an_empty_split_is_refused() -> None:
    scenarios = parse_scenarios(tiny())
    assert {e.id for e in scenarios.only("test").episodes} == {"zoe-recipe"}
    assert len(scenarios.only("all").episodes) == 4
    data = tiny()
    for e in data["episodes"]:
        e["split"] = "dev"
    with pytest.raises(ScenarioError, match="no episode in split 'test'"):
        parse_scenarios(data).only("test")


def test_the_shipped_format_2_set_is_what_its_generator_writes() -> None:
    on_disk = json.loads(generate_v2.OUT.read_text(encoding="utf-8"))
    assert on_disk == json.loads(json.dumps(generate_v2.build(), ensure_ascii=False))


def test_the_shipped_format_2_set_has_the_size_and_variety_it_claims() -> None:
    scenarios = load_scenarios("collab-v2")
    episodes = scenarios.episodes
    assert len(episodes) >= 300
    assert len({e.task.template for e in episodes}) >= 10
    assert len(scenarios.templates) >= 5
    assert len(scenarios.users) >= 12
    assert {e.kind for e in episodes} == {"clear", "missing", "ambiguous", "contradictory"}
    assert {e.split for e in episodes} == {"dev", "test"}
    assert {e.source(s) for e in episodes for s in e.slots} >= {
        "request", "document", "memory", "context", "hidden"
    }  # fmt: skip
    assert any(e.closing for e in episodes)
    assert any(e.announces for e in episodes)
    assert any(e.exempt for e in episodes)
    assert any(e.chat for e in episodes)
    names = [u.name for u in scenarios.users.values()]
    assert any(
        unicodedata.normalize("NFKD", n).encode("ascii", "ignore").decode() != n for n in names
    )
    assert len({len(set(e.date for e in episodes if e.user == u)) for u in scenarios.users}) >= 1
    assert len({e.date for e in episodes}) > 10
    # a person's episodes stay in one split, so memory never carries from dev into test
    assert all(len({e.split for e in episodes if e.user == u}) == 1 for u in scenarios.users)


def _forms(value: str) -> set[str]:
    """The ways a writer may put ``value``: as given, and as the product reads it
    ("CHF 2,400" -> "CHF 2400")."""
    return {value, *(found.value for found in parse_money.find_money(value))}


def test_a_value_check_passes_the_meant_value_in_any_form_and_fails_the_other_readings() -> None:
    # Counter-example of an earlier generator: an ambiguous amount's check was the reading's
    # literal text, "(?i)CHF\ 2,400", failed by a document saying "CHF 2400" (a right value)
    raw = json.loads(generate_v2.OUT.read_text(encoding="utf-8"))
    checked = 0
    for episode in raw["episodes"]:
        checks = {c["slot"]: c for c in episode["success"] if "slot" in c}
        for name, slot in episode["slots"].items():
            check = checks.get(name)
            if check is None:
                continue
            for form in _forms(slot["value"]):
                assert passes(check, f"{name}: {form}"), (episode["id"], name, form)
            for other in set(slot.get("readings", [])) - {slot["value"]}:
                for form in _forms(other):
                    assert not passes(check, f"{name}: {form}"), (episode["id"], name, form)
            checked += 1
    assert checked > 500


def test_a_number_the_request_states_is_the_slot_value() -> None:
    # Counter-example of an earlier generator: a remembered "4 servings" overwrote the
    # "8 servings" a hand-written request stated, and the check wanted 4
    raw = json.loads(generate_v2.OUT.read_text(encoding="utf-8"))
    stated = [
        (episode["id"], slot)
        for episode in raw["episodes"]
        for slot in episode["slots"].values()
        if slot["in"] == "request" and slot["value"].isdigit() and not slot.get("readings")
    ]
    assert len(stated) > 20
    for episode_id, slot in stated:
        numbers = re.findall(r"\d+", digits_for_words(slot["evidence"]))
        assert slot["value"] in numbers, (episode_id, slot)
