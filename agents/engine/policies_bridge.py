"""How the turn engine consults the clarification policies (``agents/policies``).

The policies package builds a ``Situation`` from the turn's stored context (request, human chat,
document, memory, answered cards, the task's template), runs ``get_policy(agent.policy_name)``,
and the engine stores the record on the turn so that a reviewer can replay the decision.

Model signals (slot extraction, ambiguity, sampled interpretations) come from a registered
signal provider when one has something to say about the turn (the evaluation harness's oracle
mode does, for the tasks it creates), else from ``model_signals`` (the engine passes
``agents.engine.signals``: structured calls to the agent's model, only those the policy uses).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agents.policies.adapter import decide_from_context, memory_facts
from agents.policies.base import Situation
from agents.policies.registry import known_policy
from agents.policies.style import prompt_hints, restyle_actions
from agents.policies.understand import grounding as understood_grounding
from agents.policies.understand import requester_preferences, shipped_template_kind

__all__ = [
    "SignalProvider",
    "decision_options",
    "grounding",
    "known_policy",
    "policy_decision",
    "preference_hint",
    "provided_options",
    "register_signal_provider",
    "restyled_actions",
    "template_kind",
]

# A provider gets the turn context and returns options for ``decide_from_context`` (signals,
# extraction, template_kind, today) or None when it has nothing to say about this turn.
SignalProvider = Callable[[dict[str, Any]], "dict[str, Any] | None"]
_signal_providers: list[SignalProvider] = []


def register_signal_provider(provider: SignalProvider) -> None:
    if provider not in _signal_providers:
        _signal_providers.append(provider)


template_kind = shipped_template_kind


def provided_options(context: dict[str, Any]) -> dict[str, Any] | None:
    """Options from the first registered provider that has any for this turn."""
    for provider in _signal_providers:
        options = provider(context)
        if options:
            return options
    return None


def decision_options(
    context: dict[str, Any], *, model_signals: Callable[[], Mapping[str, Any]] | None = None
) -> dict[str, Any]:
    """``decide_from_context`` options for a turn: a registered provider's take precedence;
    ``model_signals`` is called only when no provider answered (it returns ``signals`` /
    ``extraction`` options, maybe none). The task's template goes with them."""
    options = provided_options(context)
    if options is None:
        options = dict(model_signals()) if model_signals is not None else {}
        options.setdefault("template_kind", template_kind(context))
    return options


def policy_decision(
    policy_name: str,
    context: dict[str, Any],
    *,
    policy_state: dict[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The policies package's decision record: ``decision`` is "act", "suggest" or "ask", with
    the one ``question`` message to send, the ``assumption`` to state, and the full situation and
    decision for review (``agents/policies/adapter.py``).

    ``options`` are the turn's options from ``decision_options`` (obtained before, so that no
    model call runs while a learning policy's state row is locked); without them, a provider's
    or none. A learning policy starts from ``policy_state`` and returns its new state under
    "policy_state" (``agents/services/learning.py`` persists it)."""
    if options is None:
        options = decision_options(context)
    return decide_from_context(policy_name, context, policy_state=policy_state, **options)


def _requester_preferences(context: Mapping[str, Any]) -> dict[str, str]:
    return requester_preferences(context, template_kind(context))


def preference_hint(context: Mapping[str, Any]) -> str:
    """Prompt lines for the requester's preferences that no rule enforces (tone, length,
    headings, number format), scoped to this kind of work."""
    return prompt_hints(_requester_preferences(context))


def restyled_actions(
    actions: list[dict[str, Any]], context: Mapping[str, Any], *, assumption: str = ""
) -> list[dict[str, Any]]:
    """The output step: the requester's enforceable preferences (spelling variant, list style,
    date format) applied to what the agent writes, and the policy's "I assumed ..."
    (``assumption``, when it went ahead) stated in the action it takes when the model left it
    out (``agents/policies/style.py``)."""
    return restyle_actions(actions, _requester_preferences(context), assumption=assumption)


def grounding(context: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """``agents.policies.understand.grounding`` for a stored context and decision ``record``
    (``policy_decision``): what the turn knew, for the embedded model's grounded sentence."""
    data = record.get("situation")
    if not isinstance(data, Mapping):
        return {"known": [], "still_open": [], "memory_item_ids": []}
    return understood_grounding(
        Situation.from_dict(data),
        memory_facts(context),
        agent=str(context.get("agent") or ""),
        asker=context.get("requested_by_id"),
    )
