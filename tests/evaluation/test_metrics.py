from __future__ import annotations

import copy
import math
from dataclasses import replace

import pytest

from agents.evaluation.metrics import (
    ask_scores,
    blocker_recall,
    over_asking,
    pass_hat_k,
    preference_by_session,
    recovery,
    slot_question_precision,
    summarise,
)
from agents.evaluation.offline import OracleSignals
from agents.evaluation.runner import RunConfig, run_offline
from agents.evaluation.scenario import load_scenarios, parse_scenarios
from agents.policies import Decision, Situation
from agents.policies.asking import ask, askable, proceed
from tests.evaluation.results import ep

# Four episodes: TP, FP, FN, TN.
CONFUSION = [
    ep("a", needs_clarification=True, blockers=["budget"], asked=True),
    ep("b", asked=True),
    ep("c", needs_clarification=True, blockers=["start_date"]),
    ep("d"),
]


def test_ask_precision_recall_f1_and_mcc_on_a_hand_computed_case() -> None:
    results = [*CONFUSION, ep("e", needs_clarification=True, blockers=["x"], asked=True)]
    # tp=2 fp=1 fn=1 tn=1
    scores = ask_scores(results)
    assert scores["ask_precision"] == pytest.approx(2 / 3)
    assert scores["ask_recall"] == pytest.approx(2 / 3)
    assert scores["ask_f1"] == pytest.approx(2 / 3)
    assert scores["ask_mcc"] == pytest.approx((2 * 1 - 1 * 1) / math.sqrt(3 * 3 * 2 * 2))


def test_ask_scores_without_any_question_leave_precision_and_mcc_undefined() -> None:
    scores = ask_scores([ep("a", needs_clarification=True, blockers=["x"]), ep("b")])
    assert scores["ask_precision"] is None
    assert scores["ask_mcc"] is None
    assert scores["ask_recall"] == 0


def test_over_asking_counts_questions_on_clear_requests_only() -> None:
    assert over_asking(CONFUSION) == pytest.approx(1 / 2)
    assert over_asking([ep("a", needs_clarification=True, blockers=["x"])]) is None


def test_slot_question_precision_and_blocker_recall() -> None:
    results = [
        ep(
            "a",
            needs_clarification=True,
            blockers=["budget", "start_date"],
            asked_slots=["budget", "pace", "budget"],
            asked_before_first=["budget", "pace"],
        ),
        ep("b", asked_slots=["travelers"]),
    ]
    assert slot_question_precision(results) == pytest.approx(2 / 4)
    assert blocker_recall(results) == pytest.approx(1 / 2)


def test_pass_hat_k_needs_every_try_to_succeed() -> None:
    # Episode a: 2 of 3 seeds succeed; b: 3 of 3.
    results = [ep("a", seed=s, success=s < 2) for s in range(3)] + [
        ep("b", seed=s, success=True) for s in range(3)
    ]
    assert pass_hat_k(results, 1) == pytest.approx((2 / 3 + 1) / 2)
    assert pass_hat_k(results, 2) == pytest.approx((1 / 3 + 1) / 2)
    assert pass_hat_k(results, 3) == pytest.approx((0 + 1) / 2)


def test_preference_adherence_and_enforcements_by_session() -> None:
    results = [
        ep("a", session=1, first_attempt={"p1": False, "p2": True}, enforcements=1),
        ep("b", session=1, first_attempt={"p1": False, "p2": False}, enforcements=2),
        ep("c", session=2, first_attempt={"p1": True, "p2": True}),
    ]
    table = preference_by_session(results)
    assert table[1] == {"adherence": 0.25, "enforcements": 1.5, "episodes": 2}
    assert table[2]["adherence"] == 1.0


def test_recovery_counts_episodes_until_the_new_preference_is_met() -> None:
    results = [
        ep("s3", session=3, changed_prefs=["new"], first_attempt={"new": False}),
        ep("s4", session=4, first_attempt={"new": False}),
        ep("s5", session=5, first_attempt={"new": True}),
        ep("x3", user="v", session=3, changed_prefs=["other"], first_attempt={"other": False}),
    ]
    assert recovery(results) == {"recovery_episodes": 3, "recovered": 0.5}


def test_summary_counts_leakage_and_turns_on_successful_episodes_only() -> None:
    results = [
        ep("a", success=True, agent_turns=2, leaked_items=1),
        ep("b", success=False, agent_turns=9, gave_up=True),
    ]
    summary = summarise(results)
    assert summary["task_success"] == 0.5
    assert summary["turns_to_completion"] == 2
    assert summary["cross_user_leakage"] == 1
    assert summary["gave_up"] == 0.5


class AlwaysAsk:
    """Asks once at the start of every episode, then acts."""

    name = "always_ask"

    def decide(self, situation: Situation) -> Decision:
        if situation.budget.asked_in_episode == 0:
            return ask(
                situation,
                policy=self.name,
                slots=askable(situation),
                rationale="always",
                extra_question="What exactly would you like?",
            )
        return proceed(situation, policy=self.name, rationale="asked already")


def few_people(*people: str):
    """The shipped format-1 set cut down to a few people (all their sessions), to keep the
    tests quick."""
    raw = copy.deepcopy(dict(load_scenarios("default").raw))
    raw["users"] = [u for u in raw["users"] if u["id"] in people]
    raw["episodes"] = [e for e in raw["episodes"] if e["user"] in people]
    return parse_scenarios(raw)


def test_always_ask_precision_equals_the_share_of_episodes_needing_clarification() -> None:
    scenarios = few_people("ana", "ben", "chloe", "dev")
    run = run_offline(scenarios, RunConfig(policies=[AlwaysAsk()], memory=(False,)))
    share = sum(e.needs_clarification for e in scenarios.episodes) / len(scenarios.episodes)
    metrics = summarise(run.results)
    assert metrics["ask_precision"] == pytest.approx(share)
    assert metrics["ask_recall"] == 1.0
    assert metrics["over_asking"] == 1.0


def test_never_asking_has_zero_recall_and_no_over_asking() -> None:
    scenarios = few_people("ana", "ben", "chloe", "dev")
    run = run_offline(scenarios, RunConfig(policies=["never"], memory=(False,), sessions=2))
    metrics = summarise(run.results)
    assert metrics["ask_recall"] == 0.0
    assert metrics["over_asking"] == 0.0
    assert metrics["ask_precision"] is None


def test_memory_raises_adherence_in_later_sessions_and_never_leaks() -> None:
    scenarios = few_people("ana", "ben", "chloe", "dev")
    run = run_offline(scenarios, RunConfig(policies=["never"], memory=(True, False)))
    by_memory = {s["memory"]: s["metrics"] for s in run.summaries()}
    later = [by_memory[m]["by_session"][5]["adherence"] for m in (True, False)]
    assert later[0] > later[1]
    assert by_memory[True]["cross_user_leakage"] == 0


def test_the_oracle_reads_the_text_never_the_blockers_or_the_category() -> None:
    # given two episodes with the same text that differ only in their labels
    scenarios = load_scenarios("default")
    episode = next(e for e in scenarios.episodes if e.needs_clarification)
    relabelled = replace(
        episode, clarification_slots=(), needs_clarification=False, category="clear"
    )
    template = episode.template_def
    # when the oracle reads both, then it says the same thing about them
    assert OracleSignals().signals(episode=episode, template=template, known={}) == (
        OracleSignals().signals(episode=relabelled, template=template, known={})
    )


def test_offline_people_give_feedback_on_every_move_and_the_bandit_learns_its_reward() -> None:
    from agents.policies.bandit import REWARDS

    scenarios = few_people("ana", "ben", "chloe", "dev", "elena", "farid")
    run = run_offline(scenarios, RunConfig(policies=["bandit"], memory=(False,), sessions=1))
    metrics = summarise(run.results)
    given = [e for e in run.events if e["actor"] == "user" and e["kind"] == "feedback"]
    assert metrics["feedback_given"] == len(given) == sum(r.agent_turns for r in run.results)
    assert metrics["feedback_given"] == (
        metrics["thumbs_up"] + metrics["thumbs_down"] + metrics["unnecessary_questions"]
    )
    assert metrics["thumbs_up"] > 0
    assert metrics["thumbs_down"] + metrics["unnecessary_questions"]
    assert all(e["reward"] == REWARDS[e["text"]] for e in given)
    never = run_offline(scenarios, RunConfig(policies=["never"], memory=(False,), sessions=1))
    assert all(e["reward"] is None for e in never.events if e["kind"] == "feedback")
    assert summarise(never.results)["unnecessary_questions"] == 0
