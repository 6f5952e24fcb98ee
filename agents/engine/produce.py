"""The fifth stage, produce: the decided turn's actions, from the producer for its kind of agent
(``agents.engine.producers``), or, when the policy asks, its one question.

Whatever produced them, the actions everyone on the task reads pass one check last: a sentence
that repeats an unshared memory item the turn was given is left out, and the trace says how
many were (``agents.policies.private_memory``; issue 28, finding 3)."""

from __future__ import annotations

import dataclasses
import logging

from agents.engine.decide import Decision
from agents.engine.gather import TurnInput
from agents.engine.producers import Produced, producer_for
from agents.engine.unshared import unshared_of
from agents.policies.understand import Understanding
from agents.schemas import DecisionOut

logger = logging.getLogger(__name__)


def produce(inp: TurnInput, understanding: Understanding, decision: Decision) -> Produced:
    if decision.asks:  # the policy's question, without calling any producer
        produced = Produced(
            actions=DecisionOut.model_validate(
                {"actions": [{"kind": "ask", "text": decision.question[:1400]}]}
            ),
            context=dict(inp.context),
        )
    else:
        produced = producer_for(inp).produce(inp, understanding, decision)
    return keep_private(inp, understanding, produced)


def keep_private(inp: TurnInput, understanding: Understanding, produced: Produced) -> Produced:
    """``produced`` without the sentences that repeat someone's unshared memory."""
    withheld = unshared_of(inp, understanding).withhold(
        [a.model_dump() for a in produced.actions.actions]
    )
    if not withheld.sentences:
        return produced
    logger.warning(
        "turn %s: %d sentences repeating unshared memory left out (items %s)",
        inp.turn.pk,
        withheld.sentences,
        list(withheld.item_ids),
    )
    context = {
        **produced.context,
        "memory_withheld": {"sentences": withheld.sentences, "item_ids": list(withheld.item_ids)},
    }
    return dataclasses.replace(
        produced,
        actions=DecisionOut.model_validate({"actions": withheld.actions}),
        context=context,
        withheld=withheld.sentences,
    )
