"""`intent_sampling`: sample k structured interpretations; ask about the slots they disagree on."""

from __future__ import annotations

from dataclasses import replace

from agents.policies.asking import ask, proceed
from agents.policies.base import Decision, Situation, SlotSpec, SlotState
from agents.policies.registry import register
from agents.policies.scoring import sampled_slot_names, shifted, slot_entropy


@register("intent_sampling")
class IntentSampling:
    """For each slot the request leaves open, H = normalised entropy of its sampled values
    (0 = all k samples agree, 1 = all differ). Ask about slots with H >= tau (most uncertain
    first, weighted by the slot's weight); if some slot has H >= tau / 2 (or asking is not
    possible) suggest; otherwise act on the modal values."""

    name = "intent_sampling"

    def __init__(self, threshold: float = 0.5) -> None:
        self.threshold = threshold

    def decide(self, situation: Situation) -> Decision:
        samples = situation.signals.interpretations
        if len(samples) < 2:
            return proceed(
                situation, policy=self.name, rationale="Fewer than two interpretations: acting."
            )
        tau = shifted(self.threshold, situation.budget.preference)
        known = {s.name for s in situation.slots}
        extra = tuple(
            SlotState(spec=SlotSpec(name=n, weight=0.6))
            for n in sampled_slot_names(samples)
            if n not in known
        )
        # Free-form tasks: the slots the samples fill become (text) slots of the situation.
        situation = replace(situation, slots=(*situation.slots, *extra))
        open_slots = list(situation.unresolved)
        entropy = {s.name: slot_entropy(samples, s.name) for s in open_slots}
        scores = {f"entropy:{name}": h for name, h in entropy.items()} | {"threshold": tau}
        disagreeing = sorted(
            (s for s in open_slots if entropy[s.name] >= tau),
            key=lambda s: -entropy[s.name] * s.spec.weight,
        )
        top = max(entropy.values(), default=0.0)
        if disagreeing and situation.budget.can_ask and not situation.timed_out:
            names = ", ".join(f"{s.name} (H={entropy[s.name]:.2f})" for s in disagreeing)
            return ask(
                situation,
                policy=self.name,
                slots=disagreeing,
                scores=scores,
                rationale=f"{len(samples)} interpretations disagree on {names}: asking.",
            )
        if top >= tau / 2:
            return proceed(
                situation,
                policy=self.name,
                action="suggest",
                scores=scores,
                rationale=f"Interpretations partly disagree (max H={top:.2f}): suggesting.",
            )
        return proceed(
            situation,
            policy=self.name,
            scores=scores,
            rationale=f"Interpretations agree (max H={top:.2f}): acting.",
        )
