"""`bandit`: a contextual bandit (LinUCB with an epsilon floor) over ask / suggest / act that
learns from thumbs up / down, logs the probability of every action for offline evaluation (IPS),
and keeps its state as JSON so the agents app can persist one per workspace (or per person).

Pure Python: d is small (8 features), so 8x8 matrices and Sherman-Morrison updates are cheap.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agents.policies.asking import ask, askable, proceed
from agents.policies.base import ACTIONS, Action, Decision, Situation
from agents.policies.registry import register
from agents.policies.scoring import slot_entropy
from agents.policies.value_of_information import CostModel, slot_risk

FEATURE_NAMES: tuple[str, ...] = (
    "bias",
    "unresolved_required",  # share of required slots still unresolved
    "risk",  # mean (1 - p) * w over every slot, from the value-of-information model
    "ambiguity",  # the judge's rating, 0.5 when absent
    "disagreement",  # mean normalised entropy of sampled values over open slots
    "budget_left",  # remaining questions / episode limit
    "preference",  # -1 ask me less, 0 normal, +1 ask me more
    "free_form",  # 1 when the task has no template
)
DIM = len(FEATURE_NAMES)
STATE_VERSION = 1

# Feedback -> reward. "unnecessary_question" is the one-click "this question was unnecessary".
REWARDS: Mapping[str, float] = {"up": 1.0, "down": 0.0, "unnecessary_question": 0.0}


def context_features(situation: Situation) -> tuple[float, ...]:
    """The context vector x (see FEATURE_NAMES), every entry in [-1, 1]."""
    slots = situation.slots
    required = [s for s in slots if s.spec.required]
    unresolved_required = (
        sum(1 for s in required if not s.answered) / len(required) if required else 0.0
    )
    costs = CostModel()
    risk = sum(slot_risk(s, situation, costs) for s in situation.unresolved) / max(1, len(slots))
    samples = situation.signals.interpretations
    open_names = [s.name for s in situation.unresolved]
    disagreement = (
        sum(slot_entropy(samples, n) for n in open_names) / len(open_names)
        if len(samples) >= 2 and open_names
        else 0.0
    )
    ambiguity = situation.signals.ambiguity
    budget = situation.budget
    limit = budget.episode_limit
    return (
        1.0,
        round(unresolved_required, 4),
        round(min(1.0, risk), 4),
        round(0.5 if ambiguity is None else ambiguity, 4),
        round(disagreement, 4),
        round(budget.remaining / limit if limit else 0.0, 4),
        {"less": -1.0, "normal": 0.0, "more": 1.0, "never": -2.0}[budget.preference],
        0.0 if situation.template else 1.0,
    )


def _dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def _matvec(m: Sequence[Sequence[float]], v: Sequence[float]) -> list[float]:
    return [_dot(row, v) for row in m]


@dataclass
class Arm:
    """One action's ridge-regression state: A^-1 (kept directly) and b."""

    a_inv: list[list[float]]
    b: list[float]
    pulls: int = 0

    @classmethod
    def fresh(cls, dim: int, ridge: float = 1.0) -> Arm:
        return cls(
            a_inv=[[(1.0 / ridge if i == j else 0.0) for j in range(dim)] for i in range(dim)],
            b=[0.0] * dim,
        )

    def theta(self) -> list[float]:
        return _matvec(self.a_inv, self.b)

    def ucb(self, x: Sequence[float], alpha: float) -> tuple[float, float]:
        mean = _dot(self.theta(), x)
        width = math.sqrt(max(0.0, _dot(x, _matvec(self.a_inv, x))))
        return mean, mean + alpha * width

    def update(self, x: Sequence[float], reward: float) -> None:
        # Sherman-Morrison: (A + x x^T)^-1 = A^-1 - (A^-1 x)(x^T A^-1) / (1 + x^T A^-1 x)
        ax = _matvec(self.a_inv, x)
        denominator = 1.0 + _dot(x, ax)
        dim = len(x)
        self.a_inv = [
            [self.a_inv[i][j] - ax[i] * ax[j] / denominator for j in range(dim)] for i in range(dim)
        ]
        self.b = [bi + reward * xi for bi, xi in zip(self.b, x, strict=True)]
        self.pulls += 1


@register("bandit")
class ContextualBandit:
    """LinUCB per action with an epsilon floor: p(best UCB) = 1 - eps + eps/n, every other allowed
    action eps/n (n allowed actions). "ask" is not allowed when the budget is spent, a question
    timed out, or nothing is left to ask. The chosen action is drawn from these probabilities
    with a generator seeded by (seed, step), so the JSON state reproduces every draw."""

    name = "bandit"

    def __init__(
        self,
        *,
        state: Mapping[str, Any] | None = None,
        alpha: float = 0.5,
        epsilon: float = 0.1,
        seed: int = 0,
    ) -> None:
        self.alpha = alpha
        self.epsilon = epsilon
        self.seed = seed
        self.step = 0
        self.arms: dict[str, Arm] = {a: Arm.fresh(DIM) for a in ACTIONS}
        if state:
            self.load_state(state)

    # --- deciding ---------------------------------------------------------------------------

    def probabilities(
        self, features: Sequence[float], allowed: Sequence[Action]
    ) -> tuple[dict[str, float], dict[str, float]]:
        """(probability of each action, its UCB score)."""
        ucbs: dict[str, float] = {a: self.arms[a].ucb(features, self.alpha)[1] for a in allowed}
        best = max(allowed, key=lambda a: (ucbs[a], ACTIONS.index(a)))  # ties: act
        n = len(allowed)
        probabilities: dict[str, float] = {a: 0.0 for a in ACTIONS}
        for a in allowed:
            probabilities[a] = self.epsilon / n + (1.0 - self.epsilon if a == best else 0.0)
        return probabilities, ucbs

    def decide(self, situation: Situation) -> Decision:
        features = context_features(situation)
        can_ask = (
            situation.budget.can_ask
            and not situation.timed_out
            and (bool(askable(situation)) or bool(situation.signals.suggested_question))
        )
        allowed: tuple[Action, ...] = ACTIONS if can_ask else ("suggest", "act")
        probabilities, ucbs = self.probabilities(features, allowed)
        rng = random.Random(f"{self.seed}:{self.step}")
        self.step += 1
        draw, cumulative = rng.random(), 0.0
        action: Action = allowed[-1]
        for a in allowed:
            cumulative += probabilities[a]
            if draw < cumulative:
                action = a
                break
        scores = {f"ucb:{a}": u for a, u in ucbs.items()}
        rationale = (
            "Contextual bandit: "
            + ", ".join(f"{a} p={probabilities[a]:.2f}" for a in allowed)
            + f"; drew {action}."
        )
        if action == "ask":
            targets = askable(situation)[:3]
            return ask(
                situation,
                policy=self.name,
                slots=targets,
                extra_question=situation.signals.suggested_question,
                scores=scores,
                rationale=rationale,
                probabilities=probabilities,
                features=features,
            )
        return proceed(
            situation,
            policy=self.name,
            action=action,
            scores=scores,
            rationale=rationale,
            probabilities=probabilities,
            features=features,
        )

    # --- learning ---------------------------------------------------------------------------

    def learn(self, decision: Decision, reward: float) -> None:
        """Update the chosen action's model with a reward in [0, 1] (thumbs up = 1)."""
        if len(decision.features) != DIM:
            raise ValueError("this decision carries no bandit features")
        if not 0.0 <= reward <= 1.0:
            raise ValueError("reward must be in [0, 1]")
        self.arms[decision.action].update(decision.features, reward)

    def greedy_action(self, situation: Situation) -> Action:
        """The action with the highest estimated mean reward (no exploration bonus)."""
        x = context_features(situation)
        return max(ACTIONS, key=lambda a: self.arms[a].ucb(x, 0.0)[0])

    # --- state ------------------------------------------------------------------------------

    def to_state(self) -> dict[str, Any]:
        return {
            "version": STATE_VERSION,
            "features": list(FEATURE_NAMES),
            "alpha": self.alpha,
            "epsilon": self.epsilon,
            "seed": self.seed,
            "step": self.step,
            "arms": {
                a: {"a_inv": arm.a_inv, "b": arm.b, "pulls": arm.pulls}
                for a, arm in self.arms.items()
            },
        }

    def load_state(self, state: Mapping[str, Any]) -> None:
        if state.get("version") != STATE_VERSION or list(state.get("features", ())) != list(
            FEATURE_NAMES
        ):
            return  # an old or foreign state: start afresh rather than misread it
        self.alpha = float(state.get("alpha", self.alpha))
        self.epsilon = float(state.get("epsilon", self.epsilon))
        self.seed = int(state.get("seed", self.seed))
        self.step = int(state.get("step", 0))
        for a in ACTIONS:
            raw = state.get("arms", {}).get(a)
            if raw is None:
                continue
            a_inv = [[float(v) for v in row] for row in raw["a_inv"]]
            b = [float(v) for v in raw["b"]]
            if len(a_inv) != DIM or any(len(row) != DIM for row in a_inv) or len(b) != DIM:
                raise ValueError(f"bandit state for {a!r} has the wrong shape")
            self.arms[a] = Arm(a_inv=a_inv, b=b, pulls=int(raw.get("pulls", 0)))
