"""The fifth stage, produce: the decided turn's actions, from the producer for its kind of agent
(``agents.engine.producers``), or, when the policy asks, its one question."""

from __future__ import annotations

from agents.engine.decide import Decision
from agents.engine.gather import TurnInput
from agents.engine.producers import Produced, producer_for
from agents.policies.understand import Understanding
from agents.schemas import DecisionOut


def produce(inp: TurnInput, understanding: Understanding, decision: Decision) -> Produced:
    if decision.asks:  # the policy's question, without calling any producer
        return Produced(
            actions=DecisionOut.model_validate(
                {"actions": [{"kind": "ask", "text": decision.question[:1400]}]}
            ),
            context=dict(inp.context),
        )
    return producer_for(inp).produce(inp, understanding, decision)
