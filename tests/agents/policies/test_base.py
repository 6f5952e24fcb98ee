from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agents.policies import (
    DEFAULT_POLICY,
    POLICY_NAMES,
    Decision,
    Question,
    Situation,
    UnknownPolicyError,
    get_policy,
    registered_names,
    resolve_policy_name,
)
from agents.policies.asking import assumption_text, question_message
from agents.policies.base import AskingBudget, Assumption
from tests.agents.policies.builders import travel, unspecified


def test_policy_package_imports_no_django():
    # A fresh interpreter, so modules other tests imported don't count.
    probe = (
        "import sys, agents.policies, agents.policies.signals, agents.policies.situation;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('django', 'collab')))"
    )

    result = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, env={}
    )

    assert result.stdout.strip() == "[]"


def test_the_default_policy_is_ask_when_blocked_and_listed():
    assert DEFAULT_POLICY == "ask_when_blocked"
    assert DEFAULT_POLICY in POLICY_NAMES
    assert "never" in registered_names()


def test_the_workspace_override_wins_over_the_agent_default_when_registered():
    assert resolve_policy_name("ask_once", "never") == "ask_once"
    assert resolve_policy_name("", "never") == "never"
    assert resolve_policy_name("retired_policy", None) == DEFAULT_POLICY


def test_an_unknown_policy_name_is_refused():
    with pytest.raises(UnknownPolicyError):
        get_policy("ask_everyone_everything")


def test_situation_round_trips_through_json():
    situation = travel(
        {"destination": ("Lisbon", "memory")},
        interpretations=[{"budget": "EUR 900"}, {"budget": "EUR 2000"}],
        ambiguity=0.4,
        preference="less",
        asked_in_session=2,
    )

    again = Situation.from_dict(json.loads(json.dumps(situation.to_dict())))

    assert again == situation


def test_decision_round_trips_through_json_and_defaults_to_a_certain_choice():
    decision = Decision(
        action="ask",
        policy="never",
        ask_slots=("budget",),
        questions=(Question(text="What budget?", slots=("budget",)),),
        scores={"ask": 0.2},
        rationale="because",
    )

    again = Decision.from_dict(json.loads(json.dumps(decision.to_dict())))

    assert again == decision
    assert decision.probabilities == {"ask": 1.0, "suggest": 0.0, "act": 0.0}
    assert decision.probability == 1.0


def test_an_ask_decision_without_questions_is_invalid():
    with pytest.raises(ValueError, match="question"):
        Decision(action="ask", policy="never")


def test_never_acts_on_an_unspecified_request_and_states_its_assumptions():
    decision = get_policy("never").decide(unspecified())

    assert decision.action == "act"
    assert decision.questions == ()
    assert [a.slot for a in decision.assumptions] == ["pace"]
    assert decision.assumption_text.startswith("I assumed the pace is balanced")


def test_never_acts_without_assumptions_when_everything_is_known():
    situation = travel(
        {
            "destination": ("Lisbon", "request"),
            "start_date": ("2026-05-04", "chat"),
            "budget": ("EUR 1500", "memory"),
            "pace": ("relaxed", "document"),
        }
    )

    decision = get_policy("never").decide(situation)

    assert decision.action == "act"
    assert decision.assumptions == ()
    assert decision.assumption_text == ""


def test_budget_preference_less_halves_and_more_raises_the_limits():
    assert AskingBudget(per_episode=2, preference="less").episode_limit == 1
    assert AskingBudget(per_episode=2, preference="more").episode_limit == 3
    assert not AskingBudget(per_episode=2, asked_in_episode=2).can_ask
    assert not AskingBudget(per_session=4, asked_in_session=4).can_ask


def test_the_assumption_text_names_every_guess_and_offers_to_redo():
    text = assumption_text(
        [
            Assumption(slot="pace", value="balanced", source="default", label="pace"),
            Assumption(slot="budget", value="EUR 800", source="model", label="budget"),
        ],
        timed_out=True,
    )

    assert text.startswith("Nobody answered yet, so I assumed the pace is balanced")
    assert "the budget is EUR 800" in text
    assert text.endswith("I'll redo it.")


def test_the_question_message_is_one_message_offering_choices():
    message = question_message(
        [
            Question(text="Where are you going?", slots=("destination",)),
            Question(
                text="Which pace?",
                slots=("pace",),
                choices=("relaxed", "packed"),
                allow_other=False,
            ),
        ]
    )

    assert message.count("\n") == 2
    assert "2. Which pace? (relaxed / packed)" in message
