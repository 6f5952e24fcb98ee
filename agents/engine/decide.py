"""The fourth stage, decide: the turn's clarification policy called once with the situation
``understand`` built; a learning policy decides from (and updates) its persisted state under
that row's lock (``agents.services.learning``). The ``Decision`` says whether the turn acts,
suggests or asks, what it asks, what it assumes, and why; its record is stored on the turn with
the actions, so a reviewer can replay it.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.engine.gather import TurnInput
from agents.models.records import PolicyRecord
from agents.policies.adapter import decide_situation
from agents.policies.base import Situation
from agents.policies.understand import Understanding
from agents.services.learning import decide_with_state


@dataclass(frozen=True)
class Decision:
    """What the policy decided for the turn (``record``: as stored on ``Turn.policy_decision``)."""

    record: PolicyRecord

    @property
    def asks(self) -> bool:
        return self.record.asks

    @property
    def suggests(self) -> bool:
        return self.record.suggests

    @property
    def question(self) -> str:
        return self.record.question

    @property
    def assumption(self) -> str:
        return self.record.assumption

    @property
    def reason(self) -> str:
        return self.record.reason

    def summary(self) -> str:
        said = self.question if self.asks else self.assumption
        return f"{self.record.policy or '?'}: {self.record.decision}" + (
            f" ({said[:80]})" if said else ""
        )


def policy_decision(
    policy_name: str,
    context: Mapping[str, Any],
    *,
    situation: Situation,
    policy_state: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The policy's decision record for ``situation`` (``context``: the turn's, which the
    situation was built from; the record does not read it again)."""
    return decide_situation(policy_name, situation, policy_state=policy_state)


def decide(inp: TurnInput, understanding: Understanding) -> Decision:
    """Call the policy once (no model call runs while a learning policy's row is locked)."""
    record = decide_with_state(
        turn=inp.turn,
        context=dict(inp.context),
        decide=functools.partial(policy_decision, situation=understanding.situation),
    )
    return Decision(record)
