"""The collaboration metrics, each defined exactly in docs/evaluation.md. Pure functions of a
list of EpisodeResult (one configuration: a policy, memory on or off, every seed).

A ratio whose denominator is zero is None ("not measurable here"), never 0.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from math import comb
from statistics import mean
from typing import Any

from agents.evaluation.results import EpisodeResult


def ratio(numerator: float, denominator: float) -> float | None:
    return None if denominator == 0 else numerator / denominator


def _mean(values: Iterable[float]) -> float | None:
    items = list(values)
    return mean(items) if items else None


def confusion(results: Sequence[EpisodeResult]) -> dict[str, int]:
    """Episode-level asking: positive = the episode needs clarification; predicted positive =
    the agent asked before its first document."""
    tp = sum(r.asked and r.needs_clarification for r in results)
    fp = sum(r.asked and not r.needs_clarification for r in results)
    fn = sum(not r.asked and r.needs_clarification for r in results)
    tn = sum(not r.asked and not r.needs_clarification for r in results)
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn}


def ask_scores(results: Sequence[EpisodeResult]) -> dict[str, float | None]:
    c = confusion(results)
    tp, fp, fn, tn = c["tp"], c["fp"], c["fn"], c["tn"]
    precision = ratio(tp, tp + fp)
    recall = ratio(tp, tp + fn)
    f1 = ratio(2 * tp, 2 * tp + fp + fn)
    denominator = math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    mcc = None if denominator == 0 else (tp * tn - fp * fn) / denominator
    return {"ask_precision": precision, "ask_recall": recall, "ask_f1": f1, "ask_mcc": mcc}


def over_asking(results: Sequence[EpisodeResult]) -> float | None:
    """Share of clear episodes (no clarification needed) in which the agent asked."""
    clear = [r for r in results if not r.needs_clarification]
    return ratio(sum(r.asked for r in clear), len(clear))


def slot_question_precision(results: Sequence[EpisodeResult]) -> float | None:
    """Share of the slots targeted by questions that were blockers of their episode."""
    asked = [(slot, r) for r in results for slot in r.asked_slots]
    return ratio(sum(slot in r.blockers for slot, r in asked), len(asked))


def blocker_recall(results: Sequence[EpisodeResult]) -> float | None:
    """Share of blockers the agent asked about before its first document."""
    blockers = [(slot, r) for r in results for slot in r.blockers]
    return ratio(sum(slot in r.asked_before_first for slot, r in blockers), len(blockers))


def pass_hat_k(results: Sequence[EpisodeResult], k: int) -> float | None:
    """pass^k: the chance that k independent tries of an episode ALL succeed, estimated per
    episode from its n seeds with c successes as C(c, k) / C(n, k), averaged over episodes."""
    by_episode: dict[str, list[bool]] = defaultdict(list)
    for r in results:
        by_episode[r.episode].append(r.success)
    values = [comb(sum(s), k) / comb(len(s), k) for s in by_episode.values() if len(s) >= k]
    return _mean(values)


def preference_by_session(results: Sequence[EpisodeResult]) -> dict[int, dict[str, Any]]:
    """Per session: first-attempt adherence (satisfied preference checks on each episode's
    first document / checks) and enforcements per episode."""
    sessions: dict[int, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        sessions[r.session].append(r)
    table = {}
    for session, items in sorted(sessions.items()):
        checks = [ok for r in items for ok in r.first_attempt.values()]
        table[session] = {
            "adherence": ratio(sum(checks), len(checks)),
            "enforcements": _mean(r.enforcements for r in items),
            "episodes": len(items),
        }
    return table


def recovery(results: Sequence[EpisodeResult]) -> dict[str, float | None]:
    """After a preference changes (from a given session on): the number of that person's
    episodes, counting the first one under the new preference, until an episode's first
    document satisfies it. `recovery_episodes` is the mean over recovered changes;
    `recovered` the share of changes recovered within the run."""
    ordered = sorted(results, key=lambda r: (r.seed, r.user, r.session))
    waits: list[int] = []
    changes = 0
    for i, r in enumerate(ordered):
        for pref in r.changed_prefs:
            changes += 1
            later = [x for x in ordered[i:] if x.user == r.user and x.seed == r.seed]
            for count, x in enumerate(later, start=1):
                if x.first_attempt.get(pref):
                    waits.append(count)
                    break
    return {"recovery_episodes": _mean(waits), "recovered": ratio(len(waits), changes)}


def feedback_counts(results: Sequence[EpisodeResult]) -> dict[str, int]:
    """The feedback the simulated people gave the agent's moves (one per move)."""
    up = sum(r.feedback_up for r in results)
    down = sum(r.feedback_down for r in results)
    unnecessary = sum(r.feedback_unnecessary for r in results)
    return {
        "feedback_given": up + down + unnecessary,
        "thumbs_up": up,
        "thumbs_down": down,
        "unnecessary_questions": unnecessary,
    }


def summarise(results: Sequence[EpisodeResult], *, seeds: int = 1) -> dict[str, Any]:
    """Every metric for one configuration."""
    done = [r for r in results if r.success]
    first_checks = [ok for r in results for ok in r.first_attempt.values()]
    summary: dict[str, Any] = {
        "episodes": len(results),
        "task_success": ratio(len(done), len(results)),
        **ask_scores(results),
        "confusion": confusion(results),
        "over_asking": over_asking(results),
        "slot_question_precision": slot_question_precision(results),
        "blocker_recall": blocker_recall(results),
        "silent_wrong_guesses": ratio(sum(r.silent_wrong for r in results), len(results)),
        "silent_wrong_episodes": ratio(sum(r.silent_wrong > 0 for r in results), len(results)),
        "turns_to_completion": _mean(r.agent_turns for r in done),
        "user_words": _mean(r.user_words for r in results),
        "user_messages": _mean(r.user_messages for r in results),
        "enforcements": _mean(r.enforcements for r in results),
        "suggestion_acceptance": ratio(
            sum(r.suggestions_accepted for r in results), sum(r.suggestions for r in results)
        ),
        "preference_adherence": ratio(sum(first_checks), len(first_checks)),
        "by_session": preference_by_session(results),
        **recovery(results),
        **feedback_counts(results),
        "cross_user_leakage": sum(r.leaked_items + r.leaked_documents for r in results),
        "gave_up": ratio(sum(r.gave_up for r in results), len(results)),
        "tokens": sum(r.tokens_in + r.tokens_out for r in results),
        "tokens_per_episode": _mean(r.tokens_in + r.tokens_out for r in results),
        "cost": round(sum(r.cost for r in results), 6),
        "model_calls": sum(r.model_calls for r in results),
    }
    summary["pass_hat_k"] = {str(k): pass_hat_k(results, k) for k in range(1, seeds + 1)}
    return summary


# The metrics a report puts in its main table, with how to read them.
MAIN_METRICS: tuple[tuple[str, str, bool], ...] = (
    ("task_success", "task success", True),
    ("ask_precision", "ask precision", True),
    ("ask_recall", "ask recall", True),
    ("ask_f1", "ask F1", True),
    ("ask_mcc", "ask MCC", True),
    ("over_asking", "over-asking (clear)", False),
    ("slot_question_precision", "slot question precision", True),
    ("blocker_recall", "blocker recall", True),
    ("silent_wrong_episodes", "silent wrong guesses (episodes)", False),
    ("turns_to_completion", "turns to completion", False),
    ("user_words", "user words / episode", False),
    ("enforcements", "enforcements / episode", False),
    ("suggestion_acceptance", "suggestion acceptance", True),
    ("preference_adherence", "preference adherence (1st attempt)", True),
    ("recovery_episodes", "episodes to recover after a change", False),
    ("cross_user_leakage", "cross-user leakage", False),
    ("tokens_per_episode", "tokens / episode", False),
)
