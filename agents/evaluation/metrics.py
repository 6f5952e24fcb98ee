"""The collaboration metrics, each defined exactly in docs/evaluation.md. Pure functions of a
list of EpisodeResult (one configuration: a policy, memory on or off, every seed).

A ratio whose denominator is zero is None ("not measurable here"), never 0.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
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
    """Episode-level asking: positive = the episode needs clarification and its person allows
    questions (``EpisodeResult.should_ask``: not under "just go ahead"); predicted positive =
    the agent asked before its first document."""
    tp = sum(r.asked and r.should_ask for r in results)
    fp = sum(r.asked and not r.should_ask for r in results)
    fn = sum(not r.asked and r.should_ask for r in results)
    tn = sum(not r.asked and not r.should_ask for r in results)
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


def blocker_confusion(results: Sequence[EpisodeResult]) -> dict[str, int]:
    """Blocker-targeted asking: a question counts only when it asks about a value that blocks
    the work. Positive = the episode should ask (``should_ask``); a hit = a question before the
    first document targeted one of its blockers. TP: should ask and hit; FN: should ask and no
    hit; FP: asked without a hit (no blocker there, or only other slots asked about: an episode
    can be both FN and FP); TN: neither asked nor should have."""
    tp = sum(r.should_ask and r.asked_blocker for r in results)
    fn = sum(r.should_ask and not r.asked_blocker for r in results)
    fp = sum(r.asked and not (r.should_ask and r.asked_blocker) for r in results)
    tn = sum(not r.asked and not r.should_ask for r in results)
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn}


def blocker_f1(results: Sequence[EpisodeResult]) -> float | None:
    """F1 of blocker-targeted asking (``blocker_confusion``); like every F1 it has no true
    negatives: read it beside MCC."""
    c = blocker_confusion(results)
    return ratio(2 * c["tp"], 2 * c["tp"] + c["fp"] + c["fn"])


def first_document_correctness(results: Sequence[EpisodeResult]) -> float | None:
    """Share of episodes whose FIRST document (edit or suggestion), before any correction,
    needed none: every value right, every success check passed, every preference in force
    followed (its checks, and a stated asking limit kept before it). An episode without a
    document fails."""
    return ratio(sum(r.first_correct for r in results), len(results))


def first_time_right(results: Sequence[EpisodeResult]) -> float | None:
    """The headline: share of episodes whose first document was correct (as
    ``first_document_correctness``) AND cost the person no needless question before it
    (``EpisodeResult.needless_question``: asked where no blocker was, under "just go ahead", or
    about no blocker). First-document correctness alone is met by asking about everything
    first: the answers make the first document right, whatever the questions cost."""
    return ratio(sum(r.first_time_right for r in results), len(results))


def corrections_per_episode(results: Sequence[EpisodeResult]) -> float | None:
    """Wrong values and missing content the person pointed out, per episode."""
    return _mean(r.corrections for r in results)


def assumption_precision(results: Sequence[EpisodeResult]) -> float | None:
    """Share of the assumptions shown with first documents that name a slot the text left
    uncertain (not stated, ambiguous or contradicted)."""
    return ratio(
        sum(r.assumptions_uncertain for r in results), sum(r.assumptions_visible for r in results)
    )


def over_asking(results: Sequence[EpisodeResult]) -> float | None:
    """Share of clear episodes (no clarification needed) in which the agent asked."""
    clear = [r for r in results if not r.needs_clarification]
    return ratio(sum(r.asked for r in clear), len(clear))


def slot_question_precision(results: Sequence[EpisodeResult]) -> float | None:
    """Share of the slots targeted by questions that were blockers of their episode."""
    asked = [(slot, r) for r in results for slot in r.asked_slots]
    return ratio(sum(slot in r.blockers for slot, r in asked), len(asked))


def blocker_recall(results: Sequence[EpisodeResult]) -> float | None:
    """Share of blockers the agent asked about before its first document, in episodes whose
    person allows questions (under "just go ahead" a blocker is to be assumed and stated)."""
    blockers = [(slot, r) for r in results if r.asking_limit != 0 for slot in r.blockers]
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


def adherence_from_second_session(results: Sequence[EpisodeResult]) -> float | None:
    """First-attempt preference adherence in each person's sessions 2 and later: the share of
    (episode, preference in force, in scope, not exempt, with a check) that the episode's first
    document satisfies, once memory has had a session to learn from."""
    checks = [ok for r in results if r.session >= 2 for ok in r.first_attempt.values()]
    return ratio(sum(checks), len(checks))


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


CATEGORIES = ("clear", "missing", "ambiguous", "contradictory")


def by_category(results: Sequence[EpisodeResult]) -> dict[str, dict[str, Any]]:
    """Per request category: episodes, ask rate (asked before the first document), ask F1 and
    the confusion counts inside that category (a clear episode needs no question, so its F1 is
    0 when the agent asked and undefined when it never did)."""
    table: dict[str, dict[str, Any]] = {}
    for category in CATEGORIES:
        items = [r for r in results if (r.category or _v1_category(r)) == category]
        if not items:
            continue
        table[category] = {
            "episodes": len(items),
            "ask_rate": ratio(sum(r.asked for r in items), len(items)),
            "ask_f1": ask_scores(items)["ask_f1"],
            "task_success": ratio(sum(r.success for r in items), len(items)),
            "confusion": confusion(items),
        }
    return table


def _v1_category(r: EpisodeResult) -> str:
    return "missing" if r.needs_clarification else "clear"


def redundant_questions(results: Sequence[EpisodeResult]) -> float | None:
    """Share of question targets the agent could already know (stated in the request or the
    document, inferable from the context, given in memory or answered before), not counting
    ambiguous or contradicted statements."""
    return ratio(sum(r.redundant for r in results), sum(len(r.asked_slots) for r in results))


def question_grounding(results: Sequence[EpisodeResult]) -> float | None:
    """Share of the choices offered in questions that come from the request, document, chat,
    memory or the template (the rest were invented)."""
    return ratio(sum(r.choices_grounded for r in results), sum(r.choices_offered for r in results))


def contradictions_noticed(results: Sequence[EpisodeResult]) -> float | None:
    """Share of conflicting slots the agent asked about before its first document or named in
    an assumption."""
    return ratio(sum(r.conflicts_noticed for r in results), sum(r.conflicts for r in results))


def asking_budget_adherence(results: Sequence[EpisodeResult]) -> float | None:
    """Share of episodes under an asking preference (at most N, ask less, just go ahead) in
    which the agent asked no more question messages than it allows."""
    bound = [r for r in results if r.asking_limit is not None]
    return ratio(sum(bool(r.asking_respected) for r in bound), len(bound))


def final_adherence(results: Sequence[EpisodeResult]) -> float | None:
    """Share of (episode, preference in force and in scope) whose check the final document
    passes."""
    checks = [ok for r in results for ok in r.final.values()]
    return ratio(sum(checks), len(checks))


def document_preservation(results: Sequence[EpisodeResult]) -> float | None:
    """Share of the starting documents' lines (headings and lines holding a value the episode
    changes aside) still in the final documents."""
    return ratio(sum(r.kept_lines for r in results), sum(r.original_lines for r in results))


def silent_wrong_episodes(results: Sequence[EpisodeResult]) -> float | None:
    return ratio(sum(r.silent_wrong > 0 for r in results), len(results))


def task_success(results: Sequence[EpisodeResult]) -> float | None:
    return ratio(sum(r.success for r in results), len(results))


def leakage(results: Sequence[EpisodeResult]) -> int:
    """Other people's memory items the product let a turn use, plus other people's preference
    content found in final documents."""
    return sum(r.leaked_items + r.leaked_content for r in results)


# The figures that get a confidence interval: name -> the metric over a list of episodes.
INTERVAL_METRICS: dict[str, Callable[[Sequence[EpisodeResult]], float | None]] = {
    "first_time_right": first_time_right,
    "first_document_correctness": first_document_correctness,
    "corrections_per_episode": corrections_per_episode,
    "blocker_f1": blocker_f1,
    "contradictions_noticed": contradictions_noticed,
    "task_success": task_success,
    "ask_f1": lambda rs: ask_scores(rs)["ask_f1"],
    "ask_mcc": lambda rs: ask_scores(rs)["ask_mcc"],
    "over_asking": lambda rs: over_asking(rs),
    "blocker_recall": lambda rs: blocker_recall(rs),
    "redundant_questions": redundant_questions,
    "silent_wrong_episodes": silent_wrong_episodes,
    "final_preference_adherence": final_adherence,
    "document_preservation": document_preservation,
}
BOOTSTRAP = 300


def interval(
    results: Sequence[EpisodeResult],
    metric: Callable[[Sequence[EpisodeResult]], float | None],
    *,
    resamples: int = BOOTSTRAP,
    seed: int = 0,
) -> tuple[float, float] | None:
    """A 95 % percentile bootstrap interval over episodes: episodes are drawn with replacement
    (all seeds of an episode together), the metric recomputed on each draw. Deterministic for a
    given seed. None when the metric is undefined on the data."""
    groups: dict[str, list[EpisodeResult]] = defaultdict(list)
    for r in results:
        groups[r.episode].append(r)
    keys = sorted(groups)
    if not keys or metric(results) is None:
        return None
    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        drawn = [x for _ in keys for x in groups[keys[rng.randrange(len(keys))]]]
        value = metric(drawn)
        if value is not None:
            values.append(value)
    if not values:
        return None
    values.sort()
    low = values[int(0.025 * (len(values) - 1))]
    high = values[math.ceil(0.975 * (len(values) - 1))]
    return (round(low, 4), round(high, 4))


def per_seed(
    results: Sequence[EpisodeResult], metric: Callable[[Sequence[EpisodeResult]], float | None]
) -> list[float | None]:
    """The metric on each seed's episodes alone (the spread over seeds)."""
    seeds = sorted({r.seed for r in results})
    return [metric([r for r in results if r.seed == s]) for s in seeds]


def intervals(results: Sequence[EpisodeResult]) -> dict[str, Any]:
    return {
        name: {"ci95": interval(results, fn), "per_seed": per_seed(results, fn)}
        for name, fn in INTERVAL_METRICS.items()
    }


def summarise(
    results: Sequence[EpisodeResult],
    *,
    seeds: int = 1,
    probes: Sequence[EpisodeResult] = (),
) -> dict[str, Any]:
    """Every metric for one configuration. `probes` (shared-task leakage probes of a set
    without chat) count in leakage only."""
    probes = [*probes, *(r for r in results if r.probe)]
    results = [r for r in results if not r.probe]
    done = [r for r in results if r.success]
    first_checks = [ok for r in results for ok in r.first_attempt.values()]
    summary: dict[str, Any] = {
        "episodes": len(results),
        "first_time_right": first_time_right(results),
        "needless_questions": ratio(sum(r.needless_question for r in results), len(results)),
        "first_document_correctness": first_document_correctness(results),
        "first_values_right": ratio(sum(r.first_values_right for r in results), len(results)),
        "first_preferences_right": ratio(
            sum(r.first_preferences_right for r in results), len(results)
        ),
        "corrections_per_episode": corrections_per_episode(results),
        "blocker_f1": blocker_f1(results),
        "blocker_confusion": blocker_confusion(results),
        "assumption_precision": assumption_precision(results),
        "assumptions_per_episode": _mean(r.assumptions_visible for r in results),
        "uncertain_per_episode": _mean(r.uncertain for r in results),
        "leakage_probes": len(probes),
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
        "adherence_from_second_session": adherence_from_second_session(results),
        "by_session": preference_by_session(results),
        **recovery(results),
        **feedback_counts(results),
        "cross_user_leakage": leakage(results) + leakage(probes),
        "values_right": ratio(sum(r.values_right for r in results), len(results)),
        "by_category": by_category(results),
        "redundant_questions": redundant_questions(results),
        "question_grounding": question_grounding(results),
        "contradictions_noticed": contradictions_noticed(results),
        "asking_budget_adherence": asking_budget_adherence(results),
        "final_preference_adherence": final_adherence(results),
        "document_preservation": document_preservation(results),
        "intervals": intervals(results),
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
    ("first_time_right", "first time right (no needless question)", True),
    ("first_document_correctness", "first document correct (any questions)", True),
    ("corrections_per_episode", "corrections / episode", False),
    ("task_success", "success after corrections (secondary)", True),
    ("ask_mcc", "ask MCC", True),
    ("blocker_f1", "blocker-targeted ask F1 (no TN)", True),
    ("ask_precision", "ask precision", True),
    ("ask_recall", "ask recall", True),
    ("ask_f1", "ask F1, any question (no TN)", True),
    ("assumption_precision", "assumption precision", True),
    ("over_asking", "over-asking (clear)", False),
    ("slot_question_precision", "slot question precision", True),
    ("blocker_recall", "blocker recall", True),
    ("silent_wrong_episodes", "silent wrong guesses (episodes)", False),
    ("turns_to_completion", "turns to completion", False),
    ("user_words", "user words / episode", False),
    ("enforcements", "enforcements / episode", False),
    ("suggestion_acceptance", "suggestion acceptance", True),
    ("preference_adherence", "preference adherence (1st attempt)", True),
    ("final_preference_adherence", "preference adherence (final)", True),
    ("adherence_from_second_session", "preference adherence from session 2 (1st attempt)", True),
    ("redundant_questions", "redundant question targets", False),
    ("question_grounding", "question grounding", True),
    ("contradictions_noticed", "contradictions noticed", True),
    ("asking_budget_adherence", "asking-budget adherence", True),
    ("document_preservation", "document preservation", True),
    ("recovery_episodes", "episodes to recover after a change", False),
    ("cross_user_leakage", "cross-user leakage", False),
    ("tokens_per_episode", "tokens / episode", False),
)
