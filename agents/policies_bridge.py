"""How the turn engine consults the clarification policies (``agents/policies``).

The policies package builds a ``Situation`` from the turn's stored context (request, human chat,
document, memory, answered cards, the task's template), runs ``get_policy(agent.policy_name)``,
and the engine stores the record on the turn so that a reviewer can replay the decision.

Model signals (slot extraction, ambiguity, sampled interpretations) come from a registered
signal provider when one has something to say about the turn (the evaluation harness's oracle
mode does, for the tasks it creates), else from ``model_signals`` (the engine passes
``agents.signals``: structured calls to the agent's model, only those the policy uses).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date
from typing import Any

from agents.policies import UnknownPolicyError, get_policy
from agents.policies.adapter import decide_from_context, memory_facts, requester_facts
from agents.policies.base import Situation, SlotState
from agents.policies.situation import known_and_open
from agents.policies.style import preferences, prompt_hints, restyle_actions
from agents.policies.templates import get_template, load_templates

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


def template_kind(context: Mapping[str, Any]) -> str | None:
    """The task's template kind (None for a free-form task: the adapter then guesses one from
    the title, goal and request, or works without). A template no longer shipped counts as none."""
    kind = str((context.get("task") or {}).get("template") or "")
    return kind if kind in load_templates() else None


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
    "policy_state" (``agents/learning.py`` persists it)."""
    if options is None:
        options = decision_options(context)
    return decide_from_context(policy_name, context, policy_state=policy_state, **options)


def _requester_preferences(context: Mapping[str, Any]) -> dict[str, str]:
    kind = template_kind(context)
    return preferences(requester_facts(context, get_template(kind) if kind else None))


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


def _said(state: SlotState) -> tuple[str, str]:
    """A known slot as people say it: ("start date", "12 May 2027"), ("", "8 travelers")."""
    value = " ".join(str(state.value or "").split())
    if state.spec.type == "date":
        try:
            day = date.fromisoformat(value)
        except ValueError:
            pass
        else:
            value = f"{day.day} {day:%B %Y}"
    if state.spec.type == "number":
        return "", f"{value} {state.spec.display}"
    return state.spec.display, value


# How sure a reading must be for the reply to state it: the policy's own threshold for an answer,
# higher for the document, whose loose readings (a "Day 1" heading read as a date) it may still
# act on but the reply does not say as fact.
STATE_CONFIDENCE = {"document": 0.9}
STATE_CONFIDENCE_DEFAULT = 0.5


def _stated(state: SlotState, agent: str) -> bool:
    value = " ".join(str(state.value or "").split()).lower()
    if not value or (agent and value in {agent.lower(), f"@{agent.lower()}"}):
        return False  # the agent's own @mention is not a value people gave
    threshold = STATE_CONFIDENCE.get(str(state.source), STATE_CONFIDENCE_DEFAULT)
    return state.confidence >= threshold


def grounding(context: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """What the turn actually knows, for the embedded model's grounded sentence
    (``agents/llm/embedded_reply.py``, ``grounded``), from the policy's ``record``
    (``policy_decision``): ``known``, [label, value] pairs of the values the request, chat,
    document or memory gave, those read surely enough to state (``STATE_CONFIDENCE``);
    ``still_open``, the labels of the required values nobody gave;
    ``memory_item_ids``, the requester's own remembered items among them (the only items the
    reply then states, so the only ones its chips may name)."""
    data = record.get("situation")
    if not isinstance(data, Mapping):
        return {"known": [], "still_open": [], "memory_item_ids": []}
    known, still_open = known_and_open(Situation.from_dict(data))
    known = tuple(s for s in known if _stated(s, str(context.get("agent") or "")))
    facts = memory_facts(context)
    asker = context.get("requested_by_id")
    item_ids: list[int] = []
    for state in known:
        if state.source != "memory" or asker is None:
            continue
        mine = [
            f.item_id
            for f in facts
            if f.person_id == asker and f.slot_name == state.name and f.item_id is not None
        ]
        if mine:
            item_ids.append(mine[-1])  # the newest wins, as the situation read it
    return {
        "known": [list(_said(state)) for state in known],
        "still_open": [state.spec.display for state in still_open],
        "memory_item_ids": item_ids,
    }
