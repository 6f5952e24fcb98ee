"""Each policy on constructed situations: clear vs ambiguous, budgets, memory, preferences."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agents.policies import POLICY_NAMES, Decision, Interpretation, Situation, get_policy
from agents.policies.asking import MAX_QUESTIONS_PER_MESSAGE
from agents.policies.base import Signals
from tests.agents.policies.builders import (
    BUDGET,
    DESTINATION,
    PACE,
    START,
    fully_specified,
    slot,
    travel,
    unspecified,
)

SPLIT_BUDGETS = [{"budget": "EUR 900"}, {"budget": "EUR 3000"}, {"budget": "EUR 1500"}]
AGREEING = [{"budget": "EUR 1500"}] * 3


def ambiguous(**overrides: object) -> Situation:
    """Nothing stated; the judge finds it ambiguous; samples disagree."""
    defaults: dict = {
        "ambiguity": 0.9,
        "interpretations": [
            {"destination": "Rome", "start_date": "2026-05-01", "budget": "EUR 900"},
            {"destination": "Oslo", "start_date": "2026-07-10", "budget": "EUR 3000"},
            {"destination": "Lima", "start_date": "2026-09-02", "budget": "EUR 1500"},
        ],
    }
    return travel(**(defaults | overrides))  # type: ignore[arg-type]


def clear() -> Situation:
    return replace(fully_specified(), signals=Signals(ambiguity=0.05))


ASKING_POLICIES = [n for n in POLICY_NAMES if n not in ("never", "bandit")]


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_every_policy_acts_on_a_clear_request_without_assumptions(name):
    decision = get_policy(name).decide(clear())

    assert decision.action == "act"
    assert decision.assumption_text == ""
    assert decision.policy == name


@pytest.mark.parametrize("name", ASKING_POLICIES)
def test_every_asking_policy_asks_about_an_ambiguous_request(name):
    decision = get_policy(name).decide(ambiguous())

    assert decision.action == "ask"
    assert 1 <= len(decision.questions) <= MAX_QUESTIONS_PER_MESSAGE
    assert all(q.text.endswith("?") and q.slots for q in decision.questions)
    assert set(decision.ask_slots) <= {"destination", "start_date", "budget", "pace"}


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_no_policy_asks_about_what_memory_chat_or_the_document_answer(name):
    situation = ambiguous(
        known={
            "destination": ("Lisbon", "memory"),
            "start_date": ("2026-05-04", "chat"),
            "budget": ("EUR 1500", "document"),
        }
    )

    for _ in range(20):  # the bandit draws: try it many times
        decision = get_policy(name).decide(situation)
        assert not {"destination", "start_date", "budget"} & set(decision.ask_slots)


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_no_policy_asks_once_the_episode_budget_is_spent(name):
    decision = get_policy(name).decide(ambiguous(asked_in_episode=2))

    assert decision.action != "ask"


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_no_policy_asks_once_the_session_budget_is_spent(name):
    decision = get_policy(name).decide(ambiguous(asked_in_session=6))

    assert decision.action != "ask"


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_after_a_question_times_out_every_policy_proceeds_and_says_what_it_assumed(name):
    decision = get_policy(name).decide(ambiguous(asked_in_episode=1, timed_out=True))

    assert decision.action in ("act", "suggest")
    assert decision.assumption_text.startswith("Nobody answered")
    assert "redo" in decision.assumption_text


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_every_decision_logs_probabilities_that_sum_to_one(name):
    for situation in (clear(), ambiguous(), unspecified()):
        decision = get_policy(name).decide(situation)

        assert sum(decision.probabilities.values()) == pytest.approx(1.0)
        assert decision.probability > 0
        assert Decision.from_dict(decision.to_dict()) == decision


def test_never_acts_even_on_an_ambiguous_request_and_states_its_guesses():
    decision = get_policy("never").decide(ambiguous())

    assert decision.action == "act"
    assert "the destination is" in decision.assumption_text
    assert "the pace is balanced" in decision.assumption_text


def test_ask_once_asks_one_batched_message_then_never_again():
    policy = get_policy("ask_once")

    first = policy.decide(unspecified())
    later = policy.decide(travel(asked_in_episode=1))
    after_a_change = policy.decide(travel(changes_in_episode=1))

    assert first.action == "ask"
    assert first.ask_slots == ("destination", "start_date", "budget")
    assert later.action == "act"
    assert after_a_change.action == "act"


def test_ask_once_offers_the_template_choices():
    pace_without_default = replace(PACE, default=None)
    situation = Situation(
        request="Plan a trip to Lisbon from 4 May for EUR 1500",
        template="travel_plan",
        slots=(
            slot(DESTINATION, "Lisbon"),
            slot(START, "2026-05-04"),
            slot(BUDGET, "EUR 1500"),
            slot(pace_without_default),
        ),
    )

    decision = get_policy("ask_once").decide(situation)

    assert decision.action == "ask"
    assert decision.ask_slots == ("pace",)
    assert decision.questions[0].choices == ("relaxed", "balanced", "packed")
    assert not decision.questions[0].allow_other


def test_llm_judge_asks_above_suggests_near_and_acts_below_its_threshold():
    policy = get_policy("llm_judge")

    assert policy.decide(unspecified_with(ambiguity=0.8)).action == "ask"
    assert policy.decide(unspecified_with(ambiguity=0.45)).action == "suggest"
    assert policy.decide(unspecified_with(ambiguity=0.2)).action == "act"
    assert policy.decide(unspecified()).action == "act"  # no rating


def test_llm_judge_asks_about_the_slots_it_found_unclear():
    situation = replace(
        unspecified(), signals=Signals(ambiguity=0.8, unclear_slots=("budget", "nonsense"))
    )

    decision = get_policy("llm_judge").decide(situation)

    assert decision.ask_slots == ("budget",)


def test_llm_judge_asks_its_own_question_on_a_free_form_task():
    situation = Situation(
        request="Do the thing",
        signals=Signals(ambiguity=0.9, suggested_question="Which thing do you mean"),
    )

    decision = get_policy("llm_judge").decide(situation)

    assert decision.action == "ask"
    assert decision.questions[0].text == "Which thing do you mean?"


def test_intent_sampling_asks_only_about_the_slot_the_samples_disagree_on():
    situation = travel(
        {"destination": ("Lisbon", "request")},
        interpretations=[
            {"start_date": "2026-05-04", "budget": b["budget"]} for b in SPLIT_BUDGETS
        ],
    )

    decision = get_policy("intent_sampling").decide(situation)

    assert decision.action == "ask"
    assert decision.ask_slots == ("budget",)
    assert set(decision.questions[0].choices) == {"EUR 900", "EUR 3000", "EUR 1500"}
    assert decision.scores["entropy:budget"] == pytest.approx(1.0)
    assert decision.scores["entropy:start_date"] == pytest.approx(0.0)


def test_intent_sampling_acts_on_the_modal_values_when_samples_agree():
    decision = get_policy("intent_sampling").decide(travel(interpretations=AGREEING))

    assert decision.action == "act"
    assert "the budget is EUR 1500" in decision.assumption_text


def test_intent_sampling_asks_about_free_form_slots_with_sampled_choices():
    situation = Situation(
        request="Sort out the thing",
        signals=Signals(
            interpretations=tuple(
                sampled_thing(v) for v in ("quarterly report", "team party", "quarterly report")
            )
        ),
    )

    decision = get_policy("intent_sampling").decide(situation)

    assert decision.action == "ask"
    assert decision.ask_slots == ("thing",)
    assert decision.questions[0].choices == ("quarterly report", "team party")


def test_value_of_information_asks_about_the_riskiest_slots_first():
    decision = get_policy("value_of_information").decide(unspecified())

    assert decision.action == "ask"
    assert decision.ask_slots[:2] == ("destination", "start_date")
    assert decision.scores["ask"] < min(decision.scores["act"], decision.scores["suggest"])


def test_value_of_information_suggests_when_only_minor_slots_are_open():
    situation = travel(
        {
            "destination": ("Lisbon", "request"),
            "start_date": ("2026-05-04", "request"),
        },
        interpretations=SPLIT_BUDGETS,
    )

    decision = get_policy("value_of_information").decide(situation)

    assert decision.action == "suggest"
    assert decision.scores["suggest"] < decision.scores["ask"]


def test_value_of_information_trusts_sampled_agreement():
    known = {"destination": ("Lisbon", "request"), "start_date": ("2026-05-04", "request")}

    split = get_policy("value_of_information").decide(travel(known, interpretations=SPLIT_BUDGETS))
    agreed = get_policy("value_of_information").decide(travel(known, interpretations=AGREEING))

    assert agreed.scores["risk:budget"] == pytest.approx(0.0)
    assert split.scores["risk:budget"] > 0.3
    assert agreed.action == "act"


def test_value_of_information_questions_cost_more_as_the_session_goes_on():
    policy = get_policy("value_of_information")

    fresh = policy.decide(unspecified())
    tired = policy.decide(travel(asked_in_session=4))

    assert tired.scores["question_cost"] > fresh.scores["question_cost"]


@pytest.mark.parametrize(
    "name", ["ask_once", "llm_judge", "intent_sampling", "value_of_information"]
)
def test_ask_me_less_never_asks_more_than_normal(name):
    policy = get_policy(name)
    situations = [
        ambiguous(),
        ambiguous(ambiguity=0.65),
        travel(
            {"destination": ("Lisbon", "request")}, interpretations=SPLIT_BUDGETS[:2] + AGREEING[:1]
        ),
        travel({"destination": ("Lisbon", "request"), "start_date": ("2026-05-04", "chat")}),
    ]

    normal = [policy.decide(s).action == "ask" for s in situations]
    less = [policy.decide(with_preference(s, "less")).action == "ask" for s in situations]

    assert sum(less) <= sum(normal)
    assert all(n or not fewer for n, fewer in zip(normal, less, strict=True))


def test_ask_me_less_stops_borderline_questions():
    borderline = ambiguous(ambiguity=0.65)

    assert get_policy("llm_judge").decide(borderline).action == "ask"
    assert get_policy("llm_judge").decide(with_preference(borderline, "less")).action != "ask"
    assert (
        get_policy("value_of_information")
        .decide(
            travel(
                {"destination": ("Lisbon", "request"), "start_date": ("2026-05-04", "request")},
                interpretations=SPLIT_BUDGETS,
                preference="more",
            )
        )
        .action
        == "ask"
    )


def test_ask_me_less_halves_the_budget():
    decision = get_policy("value_of_information").decide(
        ambiguous(asked_in_episode=1, preference="less")
    )

    assert decision.action != "ask"


# --- helpers ---------------------------------------------------------------------------------


def unspecified_with(*, ambiguity: float) -> Situation:
    return travel(ambiguity=ambiguity)


def with_preference(situation: Situation, preference: str) -> Situation:
    return replace(situation, budget=replace(situation.budget, preference=preference))


def sampled_thing(thing: str) -> Interpretation:
    return Interpretation(summary=thing, values={"thing": thing})
