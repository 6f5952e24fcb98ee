"""How the turn engine consults the clarification policies (``agents/policies``).

The policies package builds a ``Situation`` from the turn's stored context (request, human chat,
document, memory, answered cards), runs ``get_policy(agent.policy_name)``, and the engine stores
the record on the turn so that a reviewer can replay the decision. Model signals (slot
extraction, ambiguity, sampled interpretations) are not computed yet: policies see only what
the text itself shows, unless a registered signal provider supplies them (the evaluation
harness's oracle mode does, for the tasks it creates).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents.policies import UnknownPolicyError, get_policy
from agents.policies.adapter import decide_from_context

# A provider gets the turn context and returns options for ``decide_from_context`` (signals,
# extraction, template_kind, today) or None when it has nothing to say about this turn.
SignalProvider = Callable[[dict[str, Any]], "dict[str, Any] | None"]
_signal_providers: list[SignalProvider] = []


def register_signal_provider(provider: SignalProvider) -> None:
    if provider not in _signal_providers:
        _signal_providers.append(provider)


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
    for provider in _signal_providers:
        options = provider(context)
        if options:
            return decide_from_context(policy_name, context, **options)
    return decide_from_context(policy_name, context)
