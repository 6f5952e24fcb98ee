"""The trivial policies: counter-examples every figure of a report is shown beside.

Each does no work a figure should reward (docs/evaluation.md "Counter-examples"): always ask,
ask forever, a seeded coin, act at once, act at once naming every value as an assumption, and
the default policy with a memory filter that lets everyone's items through. They are
evaluation-only: none is registered as a product policy (agents.policies.registry), so no agent
can be given one; the harness plays them as policy objects.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from agents.policies import DEFAULT_POLICY
from agents.policies.asking import ask, askable, assumption_text, best_guesses, proceed
from agents.policies.base import Assumption, Decision, Situation


class AlwaysAsk:
    """Asks one message about everything it may ask at the start of every episode, then acts."""

    name = "trivial:always_ask"

    def decide(self, situation: Situation) -> Decision:
        if situation.budget.asked_in_episode == 0:
            return ask(
                situation,
                policy=self.name,
                slots=askable(situation),
                rationale="Always asks first.",
                extra_question="What exactly would you like?",
            )
        return proceed(situation, policy=self.name, rationale="Asked already.")


class AskForever:
    """Asks on every turn and never writes."""

    name = "trivial:ask_forever"

    def decide(self, situation: Situation) -> Decision:
        return ask(
            situation,
            policy=self.name,
            slots=askable(situation),
            rationale="Always asks.",
            extra_question="Anything else before I start?",
        )


class Coin:
    """A seeded coin: asks or acts with even odds on every turn (deterministic for a seed)."""

    name = "trivial:coin"

    def __init__(self, seed: int = 0) -> None:
        self.random = random.Random(f"coin:{seed}")

    def decide(self, situation: Situation) -> Decision:
        if self.random.random() < 0.5:
            return ask(
                situation,
                policy=self.name,
                slots=askable(situation),
                rationale="Heads: ask.",
                extra_question="What exactly would you like?",
            )
        return Decision(action="act", policy=self.name, rationale="Tails: act, say nothing.")


class ActAtOnce:
    """Acts at once on whatever it read, never asks and states no assumption."""

    name = "trivial:act_at_once"

    def decide(self, situation: Situation) -> Decision:
        return Decision(action="act", policy=self.name, rationale="Acts at once.")


class ActNamingAll:
    """Acts at once and names every value, read or guessed, as an assumption: a list a wording
    rule would accept as "stated" without a single doubt behind it."""

    name = "trivial:act_naming_all"

    def decide(self, situation: Situation) -> Decision:
        guesses = {s.name: s for s in best_guesses(situation)}
        assumptions = tuple(
            Assumption(slot=s.name, value=value, source=s.source or "model", label=s.spec.display)
            for s in situation.slots
            if (value := (guesses[s.name].value if s.name in guesses else s.value)) is not None
        )
        return Decision(
            action="act",
            policy=self.name,
            assumptions=assumptions,
            assumption_text=assumption_text(assumptions),
            rationale="Acts at once, everything named as assumed.",
        )


@dataclass(frozen=True)
class LeakyFilter:
    """The default policy whose memory filter lets every person's items through to the turn's
    work (the product lets the requester's own items and shared task facts through)."""

    name: str = "trivial:leaky_filter"
    policy: str = DEFAULT_POLICY


# The headline figures each counter-example must not reach (docs/evaluation.md
# "Counter-examples"): (metric, True when higher is better). A counter-example "meets" a figure
# when its value is defined and at least as good as the default policy's.
CATCHES: dict[str, tuple[tuple[str, bool], ...]] = {
    AlwaysAsk.name: (
        ("first_time_right", True),
        ("ask_mcc", True),
        ("blocker_f1", True),
        ("over_asking", False),
    ),
    AskForever.name: (
        ("first_time_right", True),
        ("ask_mcc", True),
        ("blocker_f1", True),
    ),
    Coin.name: (
        ("first_time_right", True),
        ("ask_mcc", True),
        ("blocker_f1", True),
        ("silent_wrong_episodes", False),
    ),
    ActAtOnce.name: (
        ("first_time_right", True),
        ("blocker_f1", True),
        ("silent_wrong_episodes", False),
        ("contradictions_noticed", True),
    ),
    ActNamingAll.name: (
        ("first_time_right", True),
        ("silent_wrong_episodes", False),
        ("contradictions_noticed", True),
        ("assumption_precision", True),
    ),
    LeakyFilter.name: (("cross_user_leakage", False),),
}


def meets(value: float | None, default: float | None, *, higher: bool) -> bool:
    """Whether a counter-example's figure reaches the default's (an undefined one does not)."""
    if value is None:
        return False
    if default is None:
        return True
    return value >= default if higher else value <= default


TRIVIAL_NAMES = (
    AlwaysAsk.name,
    AskForever.name,
    Coin.name,
    ActAtOnce.name,
    ActNamingAll.name,
    LeakyFilter.name,
)


def trivial_policies(seed: int = 0) -> list[object]:
    """One of each counter-example, in the order a report shows them."""
    return [AlwaysAsk(), AskForever(), Coin(seed), ActAtOnce(), ActNamingAll(), LeakyFilter()]


def trivial_policy(name: str, seed: int = 0) -> object:
    for policy in trivial_policies(seed):
        if getattr(policy, "name", "") == name:
            return policy
    raise LookupError(name)
