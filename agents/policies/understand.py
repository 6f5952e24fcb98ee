"""The third stage's pure core, understand: from a turn's stored context (and the model
signals, when the policy reads any) to the ``Situation`` its policy decides on, built once.

``understand`` returns an ``Understanding``: the parsed request, the situation, the requester's
preferences for this kind of work (what the output step enforces and the prompt names), and the
turn's memory facts as data. The stages after it read this value instead of parsing the context
again; ``grounding`` reads it for the embedded model's grounded sentence.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from agents.policies.adapter import (
    ParsedRequest,
    memory_facts,
    parse_request,
    requester_facts,
    situation_of,
)
from agents.policies.base import Situation, SlotState
from agents.policies.memory_facts import MemoryFact
from agents.policies.situation import known_and_open
from agents.policies.style import preferences
from agents.policies.templates import get_template, load_templates

# Options a signal provider may give that choose how the request is read, not the situation.
_PARSE_OPTIONS = ("template_kind", "today")


@dataclass(frozen=True)
class Understanding:
    """What a turn understood, once: the request, the situation, the requester's preferences."""

    parsed: ParsedRequest
    situation: Situation
    preferences: Mapping[str, str]  # the requester's style preferences (agents/policies/style.py)
    facts: tuple[MemoryFact, ...]  # every memory fact the turn was shown, as data

    def summary(self) -> str:
        known, still_open = known_and_open(self.situation)
        template = self.parsed.template.kind if self.parsed.template else "none"
        return f"template {template}, {len(known)} known, open: " + (
            ", ".join(s.name for s in still_open) or "none"
        )


def shipped_template_kind(context: Mapping[str, Any]) -> str | None:
    """The task's template kind (None for a free-form task: the situation then guesses one from
    the title, goal and request, or works without). A template no longer shipped counts as none."""
    kind = str((context.get("task") or {}).get("template") or "")
    return kind if kind in load_templates() else None


def requester_preferences(context: Mapping[str, Any], kind: str | None) -> dict[str, str]:
    """The requester's preferences scoped to the task's shipped template kind."""
    return preferences(requester_facts(context, get_template(kind) if kind else None))


def parse_with(context: Mapping[str, Any], options: Mapping[str, Any]) -> ParsedRequest:
    """The request read as ``options`` (a provider's, or the task's template) say."""
    return parse_request(
        context,
        template_kind=options.get("template_kind"),
        today=options.get("today"),
    )


def understand(
    context: Mapping[str, Any],
    parsed: ParsedRequest,
    *,
    kind: str | None,
    options: Mapping[str, Any],
) -> Understanding:
    """The turn's understanding from its ``parsed`` request (``parse_with``) and the options
    (model signals or a provider's: signals, extraction, budget, timed_out, changes_in_episode);
    ``kind``: the task's shipped template kind, which scopes the preferences."""
    rest = {k: v for k, v in options.items() if k not in _PARSE_OPTIONS}
    return Understanding(
        parsed=parsed,
        situation=situation_of(context, parsed, **rest),
        preferences=requester_preferences(context, kind),
        facts=tuple(memory_facts(context)),
    )


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


def grounding(
    situation: Situation,
    facts: tuple[MemoryFact, ...] | list[MemoryFact],
    *,
    agent: str,
    asker: Any,
) -> dict[str, Any]:
    """What the turn actually knows, for the embedded model's grounded sentence
    (``agents/llm/embedded_reply.py``, ``grounded``): ``known``, [label, value] pairs of the
    values the request, chat, document or memory gave, those read surely enough to state
    (``STATE_CONFIDENCE``); ``still_open``, the labels of the required values nobody gave;
    ``memory_item_ids``, the requester's (``asker``) own remembered items among them (the only
    items the reply then states, so the only ones its chips may name)."""
    known, still_open = known_and_open(situation)
    known = tuple(s for s in known if _stated(s, agent))
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
