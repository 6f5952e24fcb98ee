"""Skills: the work the agent does from its understanding alone, deterministic and grounded in
the task's own values and the person's preferences (pure Python, no Django).

The API (what the turn engine and the evaluation call):

* ``facts_from_context(context)`` (``understand.py``): ``TaskFacts`` for a turn's context,
  read by the policies' situation (the task's kind, its known and open values, the goal's
  parts, the person's preferences); ``facts_from_situation``: the same from a ``Situation``.
* ``route(request)`` (``route.py``): which skill a request asks for ("" when none covers it).
* ``run(skill, facts, count=..., one_line=...)``: that skill's ``SkillAnswer`` (reply text, and
  for ``draft`` a ``Suggestion`` for the document); ``respond(context)`` does all three and
  returns the route, the answer and the facts.
* ``draft(facts)``: the draft skill alone, for the evaluation's detectors-mode drafting: a
  ``SkillAnswer`` whose ``suggestion.replace`` is the document text to propose.
* ``grounded(text, facts)`` / ``unknown_values(text, facts)`` (``grounding.py``): whether a text
  (the small model's) names the task's facts and invents none.

The skills: draft, open_questions, decide_first, next_step, summary, title, rephrase,
checklist (a packing list for a task of no kind), risks, options, reminders, effort, share,
rate, questions (discussion, interview, feedback, FAQ), answer_when / answer_who /
answer_where / answer_budget, and capabilities (the honest answer to a request none covers).
Kinds of task are data files (agents/task_templates/*.toml, and _generic.toml for a task of no
known kind).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from agents.skills.answers import (
    CAPABILITIES,
    answer,
    answer_text,
    capabilities,
    checklist,
    effort,
    next_step,
    risks,
)
from agents.skills.facts import OpenValue, TaskFacts, Value
from agents.skills.grounding import grounded, unknown_values
from agents.skills.options import options, reminders
from agents.skills.packing import is_packing, packing_list
from agents.skills.preferences import acknowledgement
from agents.skills.prompts import questions
from agents.skills.rate import rate_total
from agents.skills.route import Route, clean, route
from agents.skills.share import share
from agents.skills.understand import facts_from_context, facts_from_situation
from agents.skills.work import (
    SkillAnswer,
    Suggestion,
    decide_first,
    draft,
    open_questions,
    rephrase,
    summary,
    title,
)

# Each takes (facts, count, one_line, the request as asked).
SKILLS: dict[str, Callable[..., SkillAnswer]] = {
    "draft": lambda f, count, line, q: draft(f),
    "open_questions": lambda f, count, line, q: open_questions(f, count),
    "decide_first": lambda f, count, line, q: decide_first(f),
    "next_step": lambda f, count, line, q: next_step(f),
    "summary": lambda f, count, line, q: summary(f, one_line=line),
    "title": lambda f, count, line, q: title(f),
    "rephrase": lambda f, count, line, q: rephrase(f),
    "checklist": lambda f, count, line, q: (
        packing_list(f, count) if f.kind is None and is_packing(q) else checklist(f, count)
    ),
    "risks": lambda f, count, line, q: risks(f, count),
    "options": lambda f, count, line, q: options(f, q, count),
    "reminders": lambda f, count, line, q: reminders(f, count),
    "effort": lambda f, count, line, q: effort(f),
    "answer_when": lambda f, count, line, q: answer(f, "when", q),
    "answer_who": lambda f, count, line, q: answer(f, "who", q),
    "answer_where": lambda f, count, line, q: answer(f, "where", q),
    "answer_budget": lambda f, count, line, q: answer(f, "budget", q),
    "answer_text": lambda f, count, line, q: answer_text(f, q),
    "preferences": lambda f, count, line, q: SkillAnswer("preferences", acknowledgement(q)),
    "questions": lambda f, count, line, q: questions(f, q, count),
    "share": lambda f, count, line, q: share(f, q) or answer_text(f, q),
    "rate": lambda f, count, line, q: rate_total(f, q) or share(f, q) or answer_text(f, q),
}


def run(
    skill: str,
    facts: TaskFacts,
    *,
    count: int | None = None,
    one_line: bool = False,
    request: str = "",
) -> SkillAnswer:
    """The named skill's answer (``capabilities`` for a skill nobody knows)."""
    do = SKILLS.get(skill)
    return capabilities(facts) if do is None else do(facts, count, one_line, clean(request))


def respond(
    context: Mapping[str, Any], *, request: str | None = None, routed: Route | None = None
) -> tuple[Route, SkillAnswer, TaskFacts]:
    """Route the turn's request and run its skill on the turn's facts: the route, the answer
    and the facts it was made from. ``routed``: the request's route when the caller has it
    already (a turn routes its request once)."""
    asked_for = request if request is not None else request_of(context)
    asked = routed if routed is not None else route(asked_for)
    if asked.skill and asked.skill != "draft":
        # a question about the task states nothing about it ("what should we decide first?"
        # is no purpose): the facts are read without it
        context = without_request(context)
    facts = facts_from_context(context)
    answer = run(asked.skill, facts, count=asked.count, one_line=asked.one_line, request=asked_for)
    return asked, answer, facts


def request_of(context: Mapping[str, Any]) -> str:
    """The turn's request: its prompt, else the newest human message."""
    request = str(context.get("request") or "").strip()
    if request:
        return request
    human = [m for m in context.get("messages", ()) if m.get("kind", "human") == "human"]
    return str(human[-1].get("body") or "") if human else ""


def without_request(context: Mapping[str, Any]) -> dict[str, Any]:
    """The context without its request (the prompt, and the chat message that carries it)."""
    request = request_of(context).strip()
    messages = [
        m for m in context.get("messages", ()) if str(m.get("body") or "").strip() != request
    ]
    return {**context, "request": "", "messages": messages}


__all__ = [
    "CAPABILITIES",
    "SKILLS",
    "OpenValue",
    "Route",
    "SkillAnswer",
    "Suggestion",
    "TaskFacts",
    "Value",
    "draft",
    "facts_from_context",
    "facts_from_situation",
    "grounded",
    "request_of",
    "respond",
    "route",
    "run",
    "unknown_values",
]
