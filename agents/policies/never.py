"""`never`: never ask; act on the best guess and say what was assumed."""

from __future__ import annotations

from agents.policies.asking import proceed
from agents.policies.base import Decision, Situation
from agents.policies.registry import register


@register("never")
class NeverAsk:
    """Acts at once on the best guess for every unresolved slot, stating each assumption."""

    name = "never"

    def decide(self, situation: Situation) -> Decision:
        guessed = [s.name for s in situation.unresolved]
        rationale = "This policy never asks."
        if guessed:
            rationale += " Acting on best guesses for: " + ", ".join(guessed) + "."
        return proceed(situation, policy=self.name, rationale=rationale)
