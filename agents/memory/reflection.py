"""Reflection: read a quiet conversation and propose what to remember about the people in it.

Two extractors run over the messages not read before: the rule-based one
(``extractors.extract_statements``, free) and, when the task's agents have a configured model (a
hosted or served model; not the tiny embedded one, which cannot do this reliably), one
structured-output call to it. Only people who wrote in the conversation and have memory
switched on are considered, a model proposal must cite a message its person wrote, and what is
noticed is kept in the task's workspace only.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Literal

from django.utils import timezone
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field
from pydantic import ValidationError as PydanticValidationError

from agents import llm, profiles
from agents.memory import queue
from agents.memory.extractors import (
    KEY_VALUES,
    KNOWN_KEYS,
    Proposal,
    extract_statements,
    key_problem,
    kinds_of_work,
    parse_command,
)
from agents.memory.models import MemorySettings, ReflectionState, Source
from agents.memory.services.reconciliation import Provenance, apply_reflection
from agents.models import Agent, Provider
from agents.policies.templates import load_templates
from collab.tasks.models import Message, Task, TaskStatus

log = logging.getLogger(__name__)

WINDOW_MESSAGES = 200
MESSAGE_CHARS_IN_PROMPT = 1500


class ExtractedMemory(BaseModel):
    """One thing worth remembering, as the model reports it (bounded for small models)."""

    person: str = Field(max_length=150, description="Username of the person it is about.")
    message_id: int = Field(description="Id of that person's message that says it.")
    operation: Literal["remember", "forget"] = "remember"
    kind: Literal["preference", "fact", "instruction"] = "preference"
    text: str = Field(min_length=3, max_length=300, description="Short, in the person's voice.")
    key: str = Field("", max_length=40, description="A structured key, or empty.")
    value: str = Field("", max_length=60)
    kinds: list[str] = Field(
        default_factory=list, max_length=5, description="Kinds of work it applies to, if said."
    )
    confidence: float = Field(0.6, ge=0, le=1)


class Extraction(BaseModel):
    memories: list[ExtractedMemory] = Field(default_factory=list, max_length=8)


SYSTEM_PROMPT = (
    "You read a team's chat and note lasting preferences, facts and standing instructions that "
    "each PERSON states about how they want agents to work with them (not one-off requests, not "
    "things about other people, nothing an agent said). Use a structured key when one fits: "
    + "; ".join(f"{key}: {meaning}" for key, meaning in KNOWN_KEYS.items())
    + ". Where the person says which kind of work it is for, list it in kinds (meeting_brief, "
    "travel_plan, blog_post, lesson_plan, related_work). Cite the id of the person's own "
    "message. Answer with JSON only, shaped as "
    '{"memories": [{"person": "...", "message_id": 1, "operation": "remember", '
    '"kind": "preference", "text": "...", "key": "", "value": "", "kinds": [], '
    '"confidence": 0.6}]}. If there is nothing, answer {"memories": []}.'
)


def _transcript(messages: Sequence[Message]) -> str:
    lines = []
    for message in messages:
        who = message.author_name if message.kind == Message.Kind.HUMAN else "agent"
        body = message.body[:MESSAGE_CHARS_IN_PROMPT].replace("\n", " ")
        lines.append(f"[{message.pk}] {who} ({message.kind}): {body}")
    return "\n".join(lines)


_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def _parse(content: Any) -> Extraction:
    text = content if isinstance(content, str) else json.dumps(content)
    text = _FENCE.sub("", text.strip())
    start, end = text.find("{"), text.rfind("}")
    if start == -1 or end == -1:
        return Extraction()
    try:
        return Extraction.model_validate_json(text[start : end + 1])
    except PydanticValidationError:
        return Extraction()


def extract_with_model(chat_model: BaseChatModel, messages: Sequence[Message]) -> Extraction:
    """One structured-output call; models without tool calling answer in JSON text instead."""
    prompt = [SystemMessage(SYSTEM_PROMPT), HumanMessage(_transcript(messages))]
    try:
        structured = chat_model.with_structured_output(Extraction)
    except (NotImplementedError, AttributeError):  # e.g. a model already bound to a schema
        return _parse(chat_model.invoke(prompt).content)
    result = structured.invoke(prompt)
    if isinstance(result, Extraction):
        return result
    try:
        return Extraction.model_validate(result)
    except PydanticValidationError:
        return Extraction()


def default_chat_model(task: Task) -> BaseChatModel | None:
    """The model reflection uses when none is passed: that of the task's first active agent
    (else the site default) when it is a configured model, ``None`` (rules only) for the
    embedded model and the fakes of tests and benchmarks."""
    agent = (
        Agent.objects.filter(tasks=task, is_active=True)
        .select_related("model_profile")
        .order_by("pk")
        .first()
    )
    profile = profiles.resolve_profile(agent.model_profile if agent is not None else None)
    if profile.provider not in (Provider.OPENAI, Provider.ANTHROPIC):
        return None
    try:
        return llm.build_chat_model(profile, schema=Extraction, temperature=0.0)
    except llm.ModelConfigError as exc:
        log.warning("Reflection with rules only: %s", exc)
        return None


@dataclass(frozen=True)
class ReflectionResult:
    outcome: str  # "reflected", "not quiet", "up to date", "already done", "no task"
    actions: tuple[str, ...] = ()


def quiet_period() -> timedelta:
    return timedelta(seconds=queue.quiet_seconds())


def reflect_conversation(
    *, task_id: int, chat_model: BaseChatModel | None = None, now: datetime | None = None
) -> ReflectionResult:
    """Reads the task's new messages once the chat has been quiet (or the task is done)."""
    now = now or timezone.now()
    task = Task.objects.filter(pk=task_id).first()
    if task is None:
        return ReflectionResult("no task")
    state = ReflectionState.objects.filter(task_id=task_id).first()
    start = state.last_message_id if state else 0
    latest = task.messages.order_by("-id").first()
    if latest is None or latest.pk <= start:
        return ReflectionResult("up to date")
    # A little slack: the job is scheduled exactly one quiet period after the message.
    if task.status != TaskStatus.DONE and latest.created_at > now - quiet_period() + timedelta(
        seconds=1
    ):
        return ReflectionResult("not quiet")

    window = list(task.messages.filter(id__gt=start).order_by("id")[:WINDOW_MESSAGES])
    authors = {m.author_id for m in window if m.kind == Message.Kind.HUMAN and m.author_id}
    off = set(
        MemorySettings.objects.filter(user_id__in=authors, enabled=False).values_list(
            "user_id", flat=True
        )
    )
    speakers = authors - off
    # People with memory off are left out entirely: nothing they wrote is read.
    readable = [m for m in window if m.kind != Message.Kind.HUMAN or m.author_id in speakers]
    proposals: list[tuple[int, Proposal, Provenance]] = []

    def provenance(message: Message) -> Provenance:
        return Provenance(
            source_kind=Source.REFLECTION,
            task_id=task_id,
            message_id=message.pk,
            person_id=message.author_id,
        )

    for message in readable:
        if message.kind != Message.Kind.HUMAN or message.author_id is None:
            continue
        if parse_command(message.body) is not None:
            continue  # explicit commands were applied when posted
        for proposal in extract_statements(message.body):
            proposals.append((message.author_id, proposal, provenance(message)))

    if chat_model is None and speakers:
        chat_model = default_chat_model(task)
    if chat_model is not None and speakers:
        by_id = {m.pk: m for m in readable}
        known_kinds = set(load_templates())
        try:
            extracted = extract_with_model(chat_model, readable).memories
        except Exception as exc:  # a provider failure leaves the rules' findings
            log.warning("Reflection on task %s with rules only: %s", task_id, exc)
            extracted = []
        for memory in extracted:
            cited = by_id.get(memory.message_id)
            if (
                cited is None
                or cited.author_id not in speakers
                or cited.author_name != memory.person
                or cited.author_id is None
            ):
                continue  # only what a person said about themselves, in this window
            key, value = memory.key.strip().lower(), memory.value.strip()
            if key in KEY_VALUES or key == "asking":
                value = value.lower()
            if bool(key) != bool(value) or (key and key_problem(key, value) is not None):
                key, value = "", ""  # keep what was said, without a structure it cannot have
            kinds = tuple(k for k in memory.kinds if k in known_kinds) or kinds_of_work(memory.text)
            proposals.append(
                (
                    cited.author_id,
                    Proposal(
                        text=memory.text,
                        kind=memory.kind,
                        key=key,
                        value=value,
                        confidence=min(memory.confidence, 0.9),
                        forget=memory.operation == "forget",
                        kinds=kinds if key != "asking" else (),
                    ),
                    provenance(cited),
                )
            )

    results = apply_reflection(
        task_id=task_id,
        workspace=task.workspace,
        read_from_message_id=start,
        read_to_message_id=window[-1].pk,
        proposals=proposals,
    )
    if results is None:
        return ReflectionResult("already done")
    return ReflectionResult("reflected", tuple(r.action for r in results))
