"""`ask_once`: one batched question before the first change, then never again this episode."""

from __future__ import annotations

from agents.policies.asking import ask, askable, proceed
from agents.policies.base import Decision, Situation
from agents.policies.registry import register


@register("ask_once")
class AskOnce:
    """Before the agent changes anything in an episode, ask one message about every required
    slot still unknown (and optional slots with neither a default nor a guess, unless the
    person asked to be asked less); afterwards act on the answers and the best guesses."""

    name = "ask_once"

    def decide(self, situation: Situation) -> Decision:
        budget = situation.budget
        if situation.timed_out:
            return proceed(situation, policy=self.name, rationale="Nobody answered; proceeding.")
        if budget.asked_in_episode or situation.changes_in_episode:
            return proceed(
                situation,
                policy=self.name,
                rationale="Already asked or already changed something in this episode.",
            )
        targets = [
            s
            for s in askable(situation)
            if s.spec.required
            or (budget.preference != "less" and s.value is None and s.spec.default is None)
        ]
        targets.sort(key=lambda s: (not s.spec.required, -s.spec.weight))
        free = situation.signals.suggested_question if not situation.slots else ""
        if not targets and not free:
            return proceed(situation, policy=self.name, rationale="Nothing unknown to ask about.")
        if not budget.can_ask:
            return proceed(
                situation,
                policy=self.name,
                action="suggest",
                rationale="Unknowns remain but the asking budget is spent: suggesting instead.",
            )
        return ask(
            situation,
            policy=self.name,
            slots=targets,
            extra_question=free,
            rationale="One batched question before the first change about: "
            + (", ".join(s.name for s in targets) or "the intent")
            + ".",
        )
