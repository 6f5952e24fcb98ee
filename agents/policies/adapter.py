"""The turn engine's side of the interface: from the JSON context a turn stores
(agents/engine/context.py `build_context`) to a Situation, and from a Decision to what the engine
needs.

Still pure Python: the context is a plain dict. Keys read: "request", "messages" (each with
"kind" and "body"), "document", "memory_items" (`MemoryFact`s, or their dicts), "answers" (each
with "question" and "answer"), "task" ("title", "goal"), the requester ("requested_by_id", else
"requested_by" matched against the facts' person names) and the request's own date
("request_date", ISO; relative dates are read against it). The prose lines under "memory" are
for the model's prompt only: policies read memory as data, and only the requester's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from agents.policies import parse_numbers
from agents.policies.asking import question_message
from agents.policies.base import AskingBudget, Decision, Signals, Situation, SlotSpec
from agents.policies.detect import detect, normalise
from agents.policies.memory_facts import MemoryFact, facts_for_requester
from agents.policies.registry import LearningPolicy, get_policy
from agents.policies.signals import SlotExtraction
from agents.policies.situation import build_situation
from agents.policies.situation_sources import asking_preference
from agents.policies.templates import TaskTemplate, get_template, guess_template


def _agent_messages(context: Mapping[str, Any]) -> list[str]:
    return [
        str(m.get("body", ""))
        for m in context.get("messages", ())
        if str(m.get("kind", "")) == "agent" and str(m.get("body", "")).strip()
    ]


def memory_facts(context: Mapping[str, Any]) -> list[MemoryFact]:
    """The context's memory items as MemoryFact (a stored turn context holds them as dicts)."""
    facts = []
    for item in context.get("memory_items", ()) or ():
        if isinstance(item, MemoryFact):
            facts.append(item)
        elif isinstance(item, Mapping) and (item.get("key") or item.get("text")):
            facts.append(
                MemoryFact(
                    item_id=item.get("item_id"),
                    person_id=item.get("person_id"),
                    person_name=str(item.get("person_name", "")),
                    key=str(item.get("key") or ""),
                    value=str(item.get("value", "")),
                    scope=str(item.get("scope", "workspace")),
                    kinds=tuple(str(k) for k in item.get("kinds", ()) or ()),
                    text=str(item.get("text", "")),
                    shared=bool(item.get("shared", False)),
                )
            )
    return facts


def requester_id(context: Mapping[str, Any], facts: list[MemoryFact]) -> int | None:
    """Who made the request: "requested_by_id", else the person whose facts carry the
    requester's name ("requested_by"). None: nobody known (only shared task facts apply)."""
    raw = context.get("requested_by_id")
    if isinstance(raw, int):
        return raw
    if isinstance(raw, str) and raw.isdigit():
        return int(raw)
    name = str(context.get("requested_by") or "").casefold()
    if name:
        for fact in facts:
            if fact.person_id is not None and fact.person_name.casefold() == name:
                return fact.person_id
    return None


def request_date(context: Mapping[str, Any], today: date | None) -> date:
    """The day the request was made (relative dates are read against it)."""
    if today is not None:
        return today
    raw = str(context.get("request_date") or context.get("today") or "")
    try:
        return date.fromisoformat(raw[:10])
    except ValueError:
        return date.today()


def requester_facts(context: Mapping[str, Any], template: TaskTemplate | None) -> list[MemoryFact]:
    """The memory facts a policy may read for this turn (`facts_for_requester`)."""
    facts = memory_facts(context)
    return facts_for_requester(
        facts, requester_id(context, facts), kind=template.kind if template else None
    )


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


# What people wrap an answer in: "I already said:", "I meant", "It's", "We'll be", "Roughly".
_WRAPPING = re.compile(
    r"(?i)^\s*(?:(?:and\s+)?(?:i\s+)?(?:already\s+)?said[:,]?|as\s+i\s+said[:,]?|i\s+meant|i\s+mean"
    r"|it['\u2019]?s|it\s+is|that['\u2019]?s|that\s+is|we['\u2019]ll\s+be|we\s+are|make\s+it"
    r"|let['\u2019]?s\s+say|roughly|around|about|maybe|probably|oh|ok(?:ay)?|sure|yes)\b[:,]?\s*"
)
# A sentence of a reply that is about the conversation, not a value ("And remember: ...").
_NOT_A_VALUE = re.compile(r"(?i)^\s*(?:and\s+)?(?:remember|please|thanks|thank\s+you|no\s+rush)\b")
_TYPE_ORDER = {"date": 0, "money": 1, "number": 2, "choice": 3}


def _labels(spec: SlotSpec) -> list[str]:
    labels = [spec.name.replace("_", " "), spec.label, *spec.aliases]
    return sorted((x for x in labels if x and len(x) > 2), key=len, reverse=True)


def _unwrap(text: str) -> str:
    previous = None
    while previous != text:
        previous, text = text, _WRAPPING.sub("", text, count=1)
    return text


def _labelled(sentence: str, spec: SlotSpec) -> str | None:
    """The value of a sentence that names the slot first: "Version: 3.9.", "the service is CDN"."""
    text = _unwrap(sentence)
    for label in _labels(spec):
        m = re.match(
            rf"(?i)^\s*(?:the\s+)?{re.escape(label)}\s*(?::|=|\bis\b|\bare\b|\bwill\s+be\b)\s*",
            text,
        )
        if m:
            return text[m.end() :]
    return None


def _clean_answer(answer: str, spec: SlotSpec) -> str:
    """An answer without its wrapping: "Destination: Seville." -> "Seville", "I already said:
    the budget is 900 EUR" -> "900 EUR", "It's 4.9" -> "4.9"."""
    text = _labelled(answer, spec)
    if text is None:
        text = _unwrap(answer)
    return text.strip().rstrip(".!").strip() or answer.strip()


def _sentences(text: str) -> list[str]:
    """A reply split where a sentence ends ("3.9. I already said: ..." -> two; "3.9" stays)."""
    parts = re.split(r"(?<=[.!?;])\s+(?=\S)", text.strip())
    return [p.strip() for p in parts if p.strip()]


def _question_lines(message: str) -> list[str]:
    """The questions of one agent message, numbering and offered choices dropped."""
    lines = []
    for line in message.splitlines():
        line = re.sub(r"^\s*(?:\d+[.)]|[-*])\s+", "", line).strip()
        if "?" in line:
            lines.append(re.sub(r"\s*\([^()]*/[^()]*\)\s*$", "", line))
    return lines or [message]


def _targets(line: str, template: TaskTemplate) -> list[SlotSpec]:
    """The slots one question asks about: its template question, "the <slot>", else a label,
    alias or unit it names ("Your message says 3 people, the document 5")."""
    asked = _norm(line)
    specs = [s for s in template.slots if s.question and _norm(s.question) in asked]
    if not specs:
        specs = [
            s for s in template.slots if re.search(rf"\bthe {re.escape(_norm(s.display))}\b", asked)
        ]
    if not specs:
        specs = [
            s
            for s in template.slots
            if any(
                re.search(rf"\b{re.escape(_norm(t))}\b", asked)
                for t in (*_labels(s), *s.units)
                if t and len(t) > 2 and _norm(t)
            )
        ]
    return specs


def _typed(sentence: str, spec: SlotSpec, *, today: date) -> str | None:
    found = detect(sentence, [spec], today=today).get(spec.name)
    if found is not None:
        return found.value
    text = _unwrap(sentence).strip().rstrip(".!")
    if spec.type == "number" and not re.search(r"\d", parse_numbers.digits_for_words(text)):
        return None
    return normalise(text, spec, today=today)


def _answer_card(
    message: str, answer: str, template: TaskTemplate, *, today: date
) -> dict[str, str]:
    targets: list[SlotSpec] = []
    for line in _question_lines(message):
        targets += [s for s in _targets(line, template) if s not in targets]
    if not targets:
        return {}
    result: dict[str, str] = {}
    sentences = _sentences(answer)
    used: set[int] = set()
    for index, sentence in enumerate(sentences):  # "Version: 3.9." names its slot
        for spec in targets:
            value = _labelled(sentence, spec)
            if value is not None and spec.name not in result:
                value = value.strip().rstrip(".!").strip()
                read = value if spec.type not in _TYPE_ORDER else _typed(value, spec, today=today)
                if read:
                    result[spec.name] = read
                    used.add(index)
                break
    typed = sorted((s for s in targets if s.type in _TYPE_ORDER), key=lambda s: _TYPE_ORDER[s.type])
    for index, sentence in enumerate(sentences):
        if index in used or _NOT_A_VALUE.match(sentence):
            continue
        for spec in typed:
            if spec.name in result:
                continue
            value = _typed(sentence, spec, today=today)
            if value is not None:
                result[spec.name] = value
                used.add(index)
                break
    free = [s for s in targets if s.type not in _TYPE_ORDER and s.name not in result]
    rest = [s for i, s in enumerate(sentences) if i not in used and not _NOT_A_VALUE.match(s)]
    for spec, sentence in zip(free, rest, strict=False):
        value = _clean_answer(sentence, spec)
        if value:
            result[spec.name] = value[:120]
    return result


def answers_by_slot(
    context: Mapping[str, Any], template: TaskTemplate | None, *, today: date
) -> dict[str, str]:
    """Map answered question cards back to slots. Each question of the card names its slots
    (its template question, "the <slot>", or a label, alias or unit it mentions); the answer is
    read sentence by sentence: a sentence that names a slot answers it, then typed values
    (dates, money, numbers, choices) go to the typed slots asked, and what is left answers the
    free-text slots asked, in order. A typed slot gets nothing from words that do not read as
    its type ("plan it for me" answers no date)."""
    if template is None:
        return {}
    result: dict[str, str] = {}
    for item in context.get("answers", ()):
        answer = str(item.get("answer", "")).strip()
        if answer:
            read = _answer_card(str(item.get("question", "")), answer, template, today=today)
            result.update(read)
    return result


def request_and_chat(context: Mapping[str, Any]) -> tuple[str, list[str], list[str]]:
    """The request (the turn's prompt, else the newest human chat message), the human chat
    before it, and the human messages after it (said while the turn waited, or a correction
    since: they are newer than the request)."""
    chat = _human_messages(context)
    request = str(context.get("request", "")).strip() or (chat[-1] if chat else "")
    stripped = [message.strip() for message in chat]
    if request in stripped:
        at = len(stripped) - 1 - stripped[::-1].index(request)
        return request, chat[:at], chat[at + 1 :]
    return request, chat, []


@dataclass(frozen=True)
class ParsedRequest:
    """A turn's request as the policies read it, before any model signal: the request (the
    turn's prompt, else the newest human message), the human chat before and after it, the
    task's template (given or guessed), the slot values its answered cards give, the requester's
    memory facts for that kind of work, and the day relative dates are read against."""

    request: str
    chat: tuple[str, ...]
    later: tuple[str, ...]
    template: TaskTemplate | None
    answers: Mapping[str, str]
    facts: tuple[MemoryFact, ...]
    today: date


def parse_request(
    context: Mapping[str, Any], *, template_kind: str | None = None, today: date | None = None
) -> ParsedRequest:
    """The request read from a turn's stored context. Without `template_kind` the template is
    guessed from the task title, goal and request (None: a free-form task)."""
    today = request_date(context, today)
    request, chat, later = request_and_chat(context)
    template = _template_for({**context, "request": request}, template_kind)
    return ParsedRequest(
        request=request,
        chat=tuple(chat),
        later=tuple(later),
        template=template,
        answers=answers_by_slot(context, template, today=today),
        facts=tuple(requester_facts(context, template)),
        today=today,
    )


def signal_inputs(
    context: Mapping[str, Any], *, template_kind: str | None = None, today: date | None = None
) -> tuple[str, TaskTemplate | None, dict[str, str]]:
    """What the model-signal prompts need, read as `situation_from_context` reads it: the
    request, the template (given or guessed) and the slot values already answered."""
    parsed = parse_request(context, template_kind=template_kind, today=today)
    return parsed.request, parsed.template, dict(parsed.answers)


def situation_of(
    context: Mapping[str, Any],
    parsed: ParsedRequest,
    *,
    signals: Signals | None = None,
    extraction: SlotExtraction | None = None,
    budget: AskingBudget | None = None,
    timed_out: bool = False,
    changes_in_episode: int = 0,
    needs_slots: bool | None = None,
) -> Situation:
    """The Situation for a parsed request. Without `budget`, the answered cards count as
    questions already asked and the preference is the requester's own "asking" fact (nobody
    else's "ask me less" changes how this person is treated). `needs_slots`: whether the
    request needs the task's values settled (None: read from its words)."""
    facts = list(parsed.facts)
    if budget is None:
        asked = len(context.get("answers", ()))
        preference, at_most = asking_preference(facts)
        budget = AskingBudget(
            asked_in_episode=asked,
            asked_in_session=asked,
            preference=preference,
            at_most=at_most,
        )
    task = context.get("task") or {}
    goal = " ".join(str(task.get(k) or "") for k in ("title", "goal")).strip()
    return build_situation(
        request=parsed.request,
        template=parsed.template,
        answers=dict(parsed.answers),
        chat=list(parsed.chat),
        later=list(parsed.later),
        document=str(context.get("document", "")),
        memory=facts,
        extraction=extraction,
        signals=signals,
        budget=budget,
        timed_out=timed_out,
        changes_in_episode=changes_in_episode,
        needs_slots=needs_slots,
        today=parsed.today,
        goal=goal,
        title=str(task.get("title") or ""),
        agent_messages=_agent_messages(context),
        people=[
            str(context.get("requested_by") or ""),
            *{str(m.get("author") or "") for m in context.get("messages", ())},
            *{f.person_name for f in memory_facts(context)},
        ],
    )


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
    """The Situation for a turn from its stored context (`parse_request`, then `situation_of`)."""
    return situation_of(
        context,
        parse_request(context, template_kind=template_kind, today=today),
        signals=signals,
        extraction=extraction,
        budget=budget,
        timed_out=timed_out,
        changes_in_episode=changes_in_episode,
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


def decide_situation(
    policy_name: str, situation: Situation, *, policy_state: Mapping[str, Any] | None = None
) -> dict[str, Any]:
    """Run the named policy once on `situation`; return `decision_record`. A learning policy is
    restored from `policy_state`, and its new state is returned under "policy_state"."""
    policy = (
        get_policy(policy_name, state=policy_state) if policy_state else get_policy(policy_name)
    )
    record = decision_record(situation, policy.decide(situation))
    if isinstance(policy, LearningPolicy):
        record["policy_state"] = policy.to_state()
    return record


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
    return decide_situation(policy_name, situation, policy_state=policy_state)
