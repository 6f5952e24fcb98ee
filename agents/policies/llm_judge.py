"""`llm_judge`: the model rates the request's ambiguity in [0, 1]; ask above a threshold."""

from __future__ import annotations

from agents.policies.asking import ask, askable, proceed
from agents.policies.base import Decision, Situation
from agents.policies.registry import register
from agents.policies.scoring import shifted


@register("llm_judge")
class LLMJudge:
    """a = signals.ambiguity (an AmbiguityRating from the model). With tau the threshold after
    the person's preference: a >= tau asks (about the slots the judge named, else every
    unresolved required slot, else its suggested question); tau - band <= a < tau suggests;
    below that the agent acts. No rating: act, and say so."""

    name = "llm_judge"

    def __init__(self, threshold: float = 0.6, suggest_band: float = 0.25) -> None:
        self.threshold = threshold
        self.suggest_band = suggest_band

    def decide(self, situation: Situation) -> Decision:
        a = situation.signals.ambiguity
        tau = shifted(self.threshold, situation.budget.preference)
        if a is None:
            return proceed(situation, policy=self.name, rationale="No ambiguity rating: acting.")
        scores = {"ambiguity": a, "threshold": tau}
        reason = situation.signals.ambiguity_reason
        why = f"Ambiguity {a:.2f} vs threshold {tau:.2f}" + (f" ({reason})" if reason else "")
        if a >= tau and situation.budget.can_ask and not situation.timed_out:
            named = askable(situation, situation.signals.unclear_slots)
            targets = named or tuple(s for s in askable(situation) if s.spec.required)
            return ask(
                situation,
                policy=self.name,
                slots=targets,
                extra_question=situation.signals.suggested_question,
                scores=scores,
                rationale=why + ": asking.",
            )
        if a >= tau - self.suggest_band:
            return proceed(
                situation,
                policy=self.name,
                action="suggest",
                scores=scores,
                rationale=why + ": suggesting (cannot ask now)."
                if a >= tau
                else why + ": unsure, so suggesting.",
            )
        return proceed(situation, policy=self.name, scores=scores, rationale=why + ": acting.")
