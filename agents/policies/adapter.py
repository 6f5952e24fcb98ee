"""The turn engine's side of the interface: from the JSON context a turn stores
(agents/context.py `build_context`) to a Situation, and from a Decision to what the engine needs.

Still pure Python: the context is a plain dict. Keys read: "request", "messages" (each with
"kind" and "body"), "document", "memory" (strings), "answers" (each with "question" and
"answer"), "task" ("title", "goal").
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import date
from typing import Any

from agents.policies.asking import question_message
from agents.policies.base import (
    AskingBudget,
    Decision,
    LearningPolicy,
    Signals,
    Situation,
    get_policy,
)
from agents.policies.detect import detect
from agents.policies.signals import SlotExtraction
from agents.policies.situation import asking_preference, build_situation
from agents.policies.templates import TaskTemplate, get_template, guess_template


def _human_messages(context: Mapping[str, Any]) -> list[str]:
    return [
        str(m.get("body", ""))
        for m in context.get("messages", ())
        if str(m.get("kind", "human")) == "human" and str(m.get("body", "")).strip()
    ]


def _template_for(context: Mapping[str, Any], kind: str | None) -> TaskTemplate | None:
    if kind:
        return get_template(kind)
    task = context.get("task") or {}
    return guess_template(
        " ".join(str(x) for x in (task.get("title", ""), task.get("goal", ""), context["request"]))
    )


def _norm(text: str) -> str:
    return " ".join(re.sub(r"[^\w\s]", " ", text.casefold()).split())


def answers_by_slot(
    context: Mapping[str, Any], template: TaskTemplate | None, *, today: date
) -> dict[str, str]:
    """Map answered question cards back to slots: a card that asked one template question gets
    the whole answer; a card with several questions gets the values detected in the answer."""
    if template is None:
        return {}
    result: dict[str, str] = {}
    for item in context.get("answers", ()):
        asked, answer = _norm(str(item.get("question", ""))), str(item.get("answer", "")).strip()
        if not answer:
            continue
        specs = [s for s in template.slots if s.question and _norm(s.question) in asked]
        if len(specs) == 1:
            result[specs[0].name] = answer
        elif specs:
            for name, found in detect(answer, specs, today=today).items():
                result[name] = found.value
    return result


def request_and_chat(context: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The request (the turn's prompt, else the newest human chat message) and the human chat
    before it."""
    chat = _human_messages(context)
    request = str(context.get("request", "")).strip() or (chat[-1] if chat else "")
    if chat and chat[-1] == request:
        chat = chat[:-1]
    return request, chat


def signal_inputs(
    context: Mapping[str, Any], *, template_kind: str | None = None, today: date | None = None
) -> tuple[str, TaskTemplate | None, dict[str, str]]:
    """What the model-signal prompts need, read as `situation_from_context` reads it: the
    request, the template (given or guessed) and the slot values already answered."""
    today = today or date.today()
    request, _ = request_and_chat(context)
    template = _template_for({**context, "request": request}, template_kind)
    return request, template, answers_by_slot(context, template, today=today)


def situation_from_context(
    context: Mapping[str, Any],
    *,
    template_kind: str | None = None,
    signals: Signals | None = None,
    extraction: SlotExtraction | None = None,
    budget: AskingBudget | None = None,
    timed_out: bool = False,
    changes_in_episode: int = 0,
    today: date | None = None,
) -> Situation:
    """The Situation for a turn from its stored context. Without `template_kind` the template is
    guessed from the task title, goal and request (None: a free-form task). Without `budget`, the
    answered cards count as questions already asked and the preference comes from memory."""
    today = today or date.today()
    request, chat = request_and_chat(context)
    memory = [str(m) for m in context.get("memory", ())]
    template = _template_for({**context, "request": request}, template_kind)
    if budget is None:
        asked = len(context.get("answers", ()))
        budget = AskingBudget(
            asked_in_episode=asked, asked_in_session=asked, preference=asking_preference(memory)
        )
    return build_situation(
        request=request,
        template=template,
        answers=answers_by_slot(context, template, today=today),
        chat=chat,
        document=str(context.get("document", "")),
        memory=memory,
        extraction=extraction,
        signals=signals,
        budget=budget,
        timed_out=timed_out,
        changes_in_episode=changes_in_episode,
        today=today,
    )


def decision_record(situation: Situation, decision: Decision) -> dict[str, Any]:
    """What the engine stores on the Turn and acts on: the action, the one question message,
    the "I assumed X" text, the rationale, and the full decision and situation for review."""
    return {
        "policy": decision.policy,
        "decision": decision.action,
        "question": question_message(decision.questions) if decision.action == "ask" else "",
        "assumption": decision.assumption_text,
        "reason": decision.rationale,
        "detail": decision.to_dict(),
        "situation": situation.to_dict(),
    }


def decide_from_context(
    policy_name: str,
    context: Mapping[str, Any],
    *,
    policy_state: Mapping[str, Any] | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Build the Situation from a turn context, run the named policy, return `decision_record`.

    `options` go to `situation_from_context` (template_kind, signals, extraction, budget,
    timed_out, changes_in_episode, today). A learning policy is restored from `policy_state`, and
    its new state is returned under "policy_state" for the engine to save.
    """
    situation = situation_from_context(context, **options)
    policy = (
        get_policy(policy_name, state=policy_state) if policy_state else get_policy(policy_name)
    )
    record = decision_record(situation, policy.decide(situation))
    if isinstance(policy, LearningPolicy):
        record["policy_state"] = policy.to_state()
    return record
