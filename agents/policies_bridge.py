"""How the turn engine consults the clarification policies (``agents/policies``).

The policies package builds a ``Situation`` from the turn's stored context (request, human chat,
document, memory, answered cards), runs ``get_policy(agent.policy_name)``, and the engine stores
the record on the turn so that a reviewer can replay the decision. Model signals (slot
extraction, ambiguity, sampled interpretations) are not computed yet: policies see only what
the text itself shows.
"""

from __future__ import annotations

from typing import Any

from agents.policies import UnknownPolicyError, get_policy
from agents.policies.adapter import decide_from_context


def known_policy(name: str) -> bool:
    try:
        get_policy(name)
    except UnknownPolicyError:
        return False
    return True


def policy_decision(policy_name: str, context: dict[str, Any]) -> dict[str, Any]:
    """The policies package's decision record: ``decision`` is "act", "suggest" or "ask", with
    the one ``question`` message to send, the ``assumption`` to state, and the full situation and
    decision for review (``agents/policies/adapter.py``)."""
    return decide_from_context(policy_name, context)
