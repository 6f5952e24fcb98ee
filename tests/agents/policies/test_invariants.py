"""Rules every policy keeps on any situation (seeded random situations, no model)."""

from __future__ import annotations

import random

import pytest

from agents.policies import POLICY_NAMES, AskingBudget, Decision, Situation, get_policy
from agents.policies.asking import MAX_QUESTIONS_PER_MESSAGE
from agents.policies.base import ASK_PREFERENCES, SLOT_SOURCES, Interpretation, Signals, SlotState
from agents.policies.templates import load_templates

TEMPLATES = list(load_templates().values())


def random_situation(rng: random.Random) -> Situation:
    template = rng.choice([*TEMPLATES, None])
    specs = template.slots if template else ()
    slots = []
    for spec in specs:
        if rng.random() < 0.5:
            slots.append(SlotState(spec=spec))
        else:
            value = rng.choice(spec.choices) if spec.choices else f"value {rng.randint(1, 3)}"
            slots.append(
                SlotState(
                    spec=spec,
                    value=value,
                    source=rng.choice(SLOT_SOURCES),
                    confidence=round(rng.random(), 2),
                )
            )
    names = [s.name for s in specs] or ["thing", "when"]
    interpretations = tuple(
        Interpretation(
            summary=f"reading {i}",
            values={n: f"v{rng.randint(1, 3)}" for n in names if rng.random() < 0.8},
        )
        for i in range(rng.choice([0, 0, 2, 3, 5]))
    )
    return Situation(
        request="a request",
        template=template.kind if template else None,
        slots=tuple(slots),
        signals=Signals(
            ambiguity=rng.choice([None, round(rng.random(), 2)]),
            unclear_slots=tuple(rng.sample(names, k=min(len(names), rng.randint(0, 2)))),
            suggested_question=rng.choice(["", "What do you mean"]),
            interpretations=interpretations,
        ),
        budget=AskingBudget(
            per_episode=rng.randint(0, 3),
            per_session=rng.randint(0, 6),
            asked_in_episode=rng.randint(0, 3),
            asked_in_session=rng.randint(0, 6),
            preference=rng.choice(ASK_PREFERENCES),
        ),
        timed_out=rng.random() < 0.2,
        changes_in_episode=rng.choice([0, 0, 1]),
    )


def check(decision: Decision, situation: Situation) -> None:
    answered = {s.name for s in situation.slots if s.answered}
    assert not answered & set(decision.ask_slots), "asked about an answered slot"
    assert sum(decision.probabilities.values()) == pytest.approx(1.0)
    assert decision.probability > 0
    if decision.action == "ask":
        assert situation.budget.can_ask, "asked beyond the budget"
        assert not situation.timed_out, "asked again after a timeout"
        assert 1 <= len(decision.questions) <= MAX_QUESTIONS_PER_MESSAGE
        assert all(q.text.endswith("?") for q in decision.questions)
        assert decision.assumptions == ()
    else:
        assert decision.questions == ()
        guessed = {a.slot for a in decision.assumptions}
        assert not guessed & answered, "stated an assumption about an answer"
    assert decision.rationale
    assert Decision.from_dict(decision.to_dict()) == decision


@pytest.mark.parametrize("name", POLICY_NAMES)
def test_every_policy_keeps_the_asking_rules_on_random_situations(name):
    rng = random.Random(name)
    policy = get_policy(name)

    for _ in range(300):
        situation = random_situation(rng)
        check(policy.decide(situation), situation)
