"""What a turn does with the skills (pure Python, no Django): the actions for a request a skill
covers, and the check on a model's free text for one no skill covers.

* ``skill_actions(context, routed=...)``: the request routed to its skill (or the route the
  turn has already), run on the turn's facts, as the turn's actions (a reply, and for a draft
  a suggestion the person accepts, edits or rejects: a skill never edits the document
  itself). ``covered`` is False when no skill covers the request; the actions are then the
  one short honest answer naming what the agent can do.
* ``checked_actions(actions, produced)``: a model's actions for a request no skill covers, its
  replies kept only when they pass the grounding check (they name the task's own facts and
  invent none), otherwise the skill's answer stands.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.skills import grounded, respond
from agents.skills.facts import TaskFacts
from agents.skills.route import Route
from agents.skills.work import SkillAnswer

SUGGESTION_NOTE = "A first draft from what the task says: accept, edit or reject it."


@dataclass(frozen=True)
class Produced:
    route: Route
    answer: SkillAnswer
    facts: TaskFacts
    actions: tuple[dict[str, Any], ...]

    @property
    def covered(self) -> bool:
        return bool(self.route.skill)


def skill_actions(context: Mapping[str, Any], *, routed: Route | None = None) -> Produced:
    """``routed``: the request's route when the turn has it already (it routes once)."""
    asked, answer, facts = respond(context, routed=routed)
    return Produced(asked, answer, facts, tuple(answer_actions(answer, SUGGESTION_NOTE)))


def answer_actions(answer: SkillAnswer, note: str) -> list[dict[str, Any]]:
    """A skill's answer as a turn's actions: its reply, then its suggestion (with ``note``)."""
    actions: list[dict[str, Any]] = [{"kind": "reply", "text": answer.text}]
    if answer.suggestion is not None:
        actions.append(
            {
                "kind": "suggest",
                "text": note,
                "find": answer.suggestion.find,
                "replace": answer.suggestion.replace,
            }
        )
    return actions


def checked_actions(actions: list[dict[str, Any]], produced: Produced) -> list[dict[str, Any]]:
    """The model's actions with each reply that fails the grounding check replaced by the
    skill's answer (once); its questions and other actions are left to the policy's checks."""
    out: list[dict[str, Any]] = []
    replaced = False
    for action in actions:
        if action.get("kind") == "reply" and not grounded(
            str(action.get("text", "")), produced.facts
        ):
            if not replaced:
                out.append({**action, "text": produced.answer.text})
                replaced = True
            continue
        out.append(action)
    return out or [{"kind": "reply", "text": produced.answer.text}]
