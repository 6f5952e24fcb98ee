"""The bandit learns from a seeded simulated feedback stream and logs usable propensities."""

from __future__ import annotations

import json
import random

import pytest

from agents.policies import Situation, get_policy
from agents.policies.bandit import (
    DIM,
    REWARDS,
    ContextualBandit,
    context_features,
)
from tests.agents.policies.builders import travel

STATED = {"destination": "Lisbon", "start_date": "2026-05-04", "budget": "EUR 1500"}
# p(thumbs up | action, number of required slots the request leaves open)
THUMBS_UP = {
    "act": {0: 0.9, 1: 0.3, 2: 0.1, 3: 0.05},
    "suggest": {0: 0.5, 1: 0.8, 2: 0.4, 3: 0.3},
    "ask": {0: 0.1, 1: 0.4, 2: 0.85, 3: 0.9},
}
BEST = {0: "act", 1: "suggest", 2: "ask", 3: "ask"}
ROUNDS = 800  # the stated budget: by then >= 80% of choices are the best action


def simulated_request(rng: random.Random) -> tuple[Situation, int]:
    stated = [name for name in STATED if rng.random() < 0.5]
    situation = travel(
        {name: (STATED[name], "request") for name in stated}, ambiguity=round(rng.random(), 2)
    )
    return situation, len(STATED) - len(stated)


def run(bandit: ContextualBandit, rounds: int, seed: int) -> list[tuple[str, int, float]]:
    rng = random.Random(seed)
    history = []
    for _ in range(rounds):
        situation, open_slots = simulated_request(rng)
        decision = bandit.decide(situation)
        reward = REWARDS["up"] if rng.random() < THUMBS_UP[decision.action][open_slots] else 0.0
        bandit.learn(decision, reward)
        history.append((decision.action, open_slots, reward))
    return history


def test_the_bandit_converges_on_the_better_action_within_the_stated_rounds():
    bandit = ContextualBandit(seed=0)

    history = run(bandit, ROUNDS, seed=0)

    last = history[-200:]
    best_share = sum(action == BEST[open_slots] for action, open_slots, _ in last) / len(last)
    first = history[:200]
    first_share = sum(action == BEST[open_slots] for action, open_slots, _ in first) / len(first)
    assert best_share >= 0.8
    assert best_share > first_share
    clear = travel({n: (v, "request") for n, v in STATED.items()})
    vague = travel()
    assert bandit.greedy_action(clear) == "act"
    assert bandit.greedy_action(vague) == "ask"


def test_the_bandit_learns_what_the_feedback_rewards():
    # A person who dislikes questions: every question gets a thumbs down.
    bandit = ContextualBandit(seed=3)
    rng = random.Random(3)
    for _ in range(300):
        situation, _ = simulated_request(rng)
        decision = bandit.decide(situation)
        reward = REWARDS["unnecessary_question"] if decision.action == "ask" else REWARDS["up"]
        bandit.learn(decision, reward)

    assert bandit.greedy_action(travel()) != "ask"


def test_logged_probabilities_sum_to_one_and_cover_the_chosen_action():
    bandit = ContextualBandit(seed=1)
    rng = random.Random(1)

    for _ in range(50):
        situation, _ = simulated_request(rng)
        decision = bandit.decide(situation)

        assert sum(decision.probabilities.values()) == pytest.approx(1.0)
        assert decision.probability >= bandit.epsilon / 3
        assert len(decision.features) == DIM


def test_asking_gets_no_probability_when_the_budget_is_spent():
    decision = ContextualBandit().decide(travel(asked_in_episode=2))

    assert decision.probabilities["ask"] == 0.0
    assert decision.action != "ask"


def test_the_state_round_trips_through_json_and_reproduces_decisions():
    bandit = ContextualBandit(seed=5)
    run(bandit, 100, seed=5)

    restored = get_policy("bandit", state=json.loads(json.dumps(bandit.to_state())))
    assert isinstance(restored, ContextualBandit)

    rng = random.Random(9)
    for _ in range(20):
        situation, _ = simulated_request(rng)
        assert restored.decide(situation) == bandit.decide(situation)


def test_a_state_from_another_version_is_ignored_not_misread():
    state = ContextualBandit(seed=2).to_state() | {"version": 0, "step": 99}

    assert ContextualBandit(state=state).step == 0


def test_learning_needs_the_features_the_decision_was_made_on():
    decision = get_policy("never").decide(travel())

    with pytest.raises(ValueError, match="features"):
        ContextualBandit().learn(decision, 1.0)


def test_features_are_bounded():
    for situation in (travel(), travel(preference="less", ambiguity=1.0)):
        assert all(-1.0 <= x <= 1.0 for x in context_features(situation))
