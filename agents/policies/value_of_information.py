"""`value_of_information` (the default): ask only when a question is cheaper, in expected cost,
than acting or suggesting on the best guess. The cost model is in docs/policies.md."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agents.policies.asking import MAX_QUESTIONS_PER_MESSAGE, ask, askable, proceed
from agents.policies.base import Action, Decision, Situation, SlotState
from agents.policies.registry import register
from agents.policies.scoring import QUESTION_COST_FACTOR, guess_probability


@dataclass(frozen=True)
class CostModel:
    """Costs in units of "redoing the main part of the work once" (a wrong direct edit of a
    weight-1 slot costs 1)."""

    wrong_act: float = 1.0  # a wrong guess acted on: the person notices, undoes, re-explains
    wrong_suggestion: float = 0.35  # a wrong guess in a suggestion: rejected or modified
    review: float = 0.1  # reviewing a suggestion at all, even a right one
    question: float = 0.3  # interrupting the person with a question message
    extra_question: float = 0.08  # each further question in the same message
    optional_factor: float = 0.3  # an optional slot matters less than a required one
    fatigue: float = 1.0  # question cost grows by this x (share of the session budget used)


def slot_risk(slot: SlotState, situation: Situation, costs: CostModel) -> float:
    """(1 - p) * w: the chance the guess is wrong times how much that slot matters."""
    p = guess_probability(slot, situation.signals.interpretations)
    weight = slot.spec.weight * (1.0 if slot.spec.required else costs.optional_factor)
    return (1.0 - p) * weight


@register("value_of_information")
class ValueOfInformation:
    """For the unresolved slots S with risk r_s = (1 - p_s) * w_s:

    E[act]      = wrong_act * sum r_s
    E[suggest]  = review + wrong_suggestion * sum r_s
    E[ask(A)]   = q + extra_question * (|A| - 1) + min(E[act], E[suggest]) over S \\ A
    with q = question * preference factor * (1 + fatigue * asked_in_session / session_limit),
    A the prefix (1..3 slots, riskiest first) that minimises E[ask]. The cheapest action wins;
    ties go to the action that bothers the person least (act, then suggest, then ask). Asking
    is possible only within the episode and session budgets and before a question timed out.
    """

    name = "value_of_information"

    def __init__(self, costs: CostModel | None = None) -> None:
        self.costs = costs or CostModel()

    def _after(self, risks: Sequence[float]) -> tuple[float, float]:
        total = sum(risks)
        return (
            self.costs.wrong_act * total,
            self.costs.review + self.costs.wrong_suggestion * total,
        )

    def question_cost(self, situation: Situation) -> float:
        budget = situation.budget
        used = budget.asked_in_session / budget.session_limit if budget.session_limit else 1.0
        factor = QUESTION_COST_FACTOR.get(budget.preference, 1.0)
        return self.costs.question * factor * (1.0 + self.costs.fatigue * used)

    def decide(self, situation: Situation) -> Decision:
        costs = self.costs
        risks = {s.name: slot_risk(s, situation, costs) for s in situation.unresolved}
        free_form_question = ""
        if not situation.slots and situation.signals.ambiguity is not None:
            # Free-form task with no slots: the judge's ambiguity stands for one "intent" slot.
            risks = {"(intent)": situation.signals.ambiguity}
            free_form_question = situation.signals.suggested_question
        e_act, e_suggest = self._after(list(risks.values()))
        scores: dict[str, float] = {"act": e_act, "suggest": e_suggest}
        scores |= {f"risk:{name}": r for name, r in risks.items()}

        best_ask: tuple[float, list[SlotState]] | None = None
        q = self.question_cost(situation)
        if situation.budget.can_ask and not situation.timed_out:
            candidates = sorted(askable(situation), key=lambda s: -risks.get(s.name, 0.0))
            candidates = [s for s in candidates if risks.get(s.name, 0.0) > 0.0]
            for n in range(1, min(len(candidates), MAX_QUESTIONS_PER_MESSAGE) + 1):
                asked = candidates[:n]
                rest = [r for name, r in risks.items() if name not in {s.name for s in asked}]
                cost = q + costs.extra_question * (n - 1) + min(self._after(rest))
                if best_ask is None or cost < best_ask[0]:
                    best_ask = (cost, asked)
            if best_ask is None and free_form_question:
                best_ask = (q + min(self._after([])), [])
        if best_ask is not None:
            scores["ask"] = best_ask[0]
        scores["question_cost"] = q

        order: list[tuple[float, int, Action]] = [(e_act, 0, "act"), (e_suggest, 1, "suggest")]
        if best_ask is not None:
            order.append((best_ask[0], 2, "ask"))
        cost, _, action = min(order)
        summary = ", ".join(f"{a} {c:.2f}" for c, _, a in sorted(order))
        if action == "ask" and best_ask is not None:
            return ask(
                situation,
                policy=self.name,
                slots=best_ask[1],
                extra_question=free_form_question,
                scores=scores,
                rationale=f"Expected costs: {summary}. Asking about "
                + (", ".join(s.name for s in best_ask[1]) or "the intent")
                + " is cheapest.",
            )
        limits = ""
        if not situation.budget.can_ask:
            limits = " The asking budget is spent."
        elif situation.timed_out:
            limits = " The last question timed out."
        return proceed(
            situation,
            policy=self.name,
            action=action,
            scores=scores,
            rationale=f"Expected costs: {summary}.{limits} {action.capitalize()} is cheapest.",
        )
