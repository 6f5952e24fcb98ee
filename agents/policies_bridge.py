"""How the turn engine consults the clarification policies (``agents/policies``).

The engine builds a ``Situation`` from the turn's context (request, human chat, document,
memory), asks ``get_policy(agent.policy_name).decide(situation)``, and stores both as dicts on
the turn so that a reviewer can replay the decision. Model signals (slot extraction, ambiguity,
sampled interpretations) are not computed yet: policies see only what the text itself shows.
"""

from __future__ import annotations

from typing import Any

from agents.policies import UnknownPolicyError, get_policy
from agents.policies.asking import question_message
from agents.policies.situation import build_situation


def known_policy(name: str) -> bool:
    try:
        get_policy(name)
    except UnknownPolicyError:
        return False
    return True


def policy_decision(policy_name: str, context: dict[str, Any]) -> dict[str, Any]:
    """``{"decision": "act" | "suggest" | "ask", "question": ..., "situation": ..., ...}``."""
    human = [m["body"] for m in context["messages"] if m["kind"] == "human"]
    request = context.get("request") or (human[-1] if human else "")
    situation = build_situation(
        request=request,
        chat=human,
        document=context.get("document", ""),
        memory=list(context.get("memory", [])),
    )
    decision = get_policy(policy_name).decide(situation)
    return {
        "policy": policy_name,
        "decision": decision.action,
        "question": question_message(decision.questions) if decision.action == "ask" else "",
        "assumption_text": decision.assumption_text,
        "situation": situation.to_dict(),
        "policy_decision": decision.to_dict(),
    }
