"""The turn context the harness hands the product, and the one call into the product's policies.

`turn_context` builds the same JSON-able snapshot `agents/engine/context.py` builds for a real turn:
the request, the document text, the recent chat, the answered question cards, the memory items of
the people in the conversation (as `MemoryFact`s, and their texts), the task with its template, and
the request's own date and weekday. Nothing from a scenario's labels goes in: no hidden value, no
blocker, no category, no conflict, no reading, no check. A test (tests/evaluation/test_modes.py)
builds the context of every shipped episode and looks for each label in it.

`product_decision` is the only place the harness calls the policies: through
`agents.policies.adapter.decide_from_context`, the entry point the turn engine uses.
"""

from __future__ import annotations

import contextlib
import inspect
from collections.abc import Iterator, Mapping, MutableMapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import date
from functools import cache
from typing import Any

from agents.policies import adapter
from agents.policies.memory_facts import MemoryFact
from agents.policies.templates import TaskTemplate, load_templates

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass
class Conversation:
    """What the task holds during an episode, as the product would store it."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, str]] = field(default_factory=list)

    def say(self, author: str, body: str, *, kind: str = "human") -> None:
        self.messages.append(
            {"id": len(self.messages) + 1, "author": author, "kind": kind, "body": body}
        )


MESSAGE_LIMIT = 20  # the product's default recent-chat window


def turn_context(
    *,
    agent: str,
    title: str,
    goal: str,
    template: TaskTemplate | None,
    document: str,
    conversation: Conversation,
    request: str,
    requester: str,
    requester_id: int,
    facts: Sequence[MemoryFact],
    day: date,
) -> dict[str, Any]:
    """The turn context for one turn (the keys of agents/engine/context.py `build_context`, plus the
    memory items as data and the request's date)."""
    return {
        "agent": agent,
        "workspace_instructions": "",
        "instructions": "",
        "task": {
            "id": None,
            "title": title,
            "goal": goal,
            "template": template.kind if template else "",
        },
        "document": document,
        "document_chars": len(document),
        "messages": list(conversation.messages[-MESSAGE_LIMIT:]),
        "notes": [],
        "answers": list(conversation.answers),
        "memory": [f.text for f in facts],
        "memory_items": [asdict(f) | {"kinds": list(f.kinds)} for f in facts],  # as stored
        "memory_item_ids": [f.item_id for f in facts],
        "request": request,
        "requested_by": requester,
        "requested_by_id": requester_id,
        "requester_id": requester_id,
        "trigger": "mention",
        "mode": "edit",
        "request_date": day.isoformat(),
        "today": day.isoformat(),
        "weekday": WEEKDAYS[day.weekday()],
    }


@cache
def _accepted() -> frozenset[str]:
    """The keyword options the product's situation builder takes (it grows; we pass what it
    knows)."""
    names: set[str] = set()
    for function in (adapter.decide_from_context, adapter.situation_from_context):
        for parameter in inspect.signature(function).parameters.values():
            if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
                names.add(parameter.name)
    return frozenset(names)


class TemplateNotSupported(RuntimeError):
    pass


@contextlib.contextmanager
def registered_templates(templates: Mapping[str, TaskTemplate]) -> Iterator[None]:
    """Make the templates a scenario file defines known to the product's template registry
    (agents.policies.templates.load_templates) for the length of a run, as if they were
    shipped: the product then reads them exactly as it reads its own. Kinds already shipped
    are never replaced; the registry is restored afterwards."""
    registry = load_templates()
    if not templates:
        yield
        return
    if not isinstance(registry, MutableMapping):
        raise TemplateNotSupported(
            "the scenario file defines templates, and agents.policies.templates no longer "
            "keeps a registry the harness can extend for a run"
        )
    added = [kind for kind in templates if kind not in registry]
    for kind in added:
        registry[kind] = templates[kind]
    try:
        yield
    finally:
        for kind in added:
            registry.pop(kind, None)


def product_decision(
    policy: str,
    context: Mapping[str, Any],
    *,
    template: TaskTemplate | None,
    day: date,
    policy_state: Mapping[str, Any] | None = None,
    signals: Any = None,
    extraction: Any = None,
) -> dict[str, Any]:
    """The product's decision record for this context (decide_from_context), given only what a
    real turn has: the template, the request's date, and (real / oracle modes) model signals."""
    options: dict[str, Any] = {}
    accepted = _accepted()
    if template is not None:
        if template.kind not in load_templates():
            raise TemplateNotSupported(
                f"template {template.kind!r} is defined in the scenario file: play it inside "
                "registered_templates(...)"
            )
        options["template_kind"] = template.kind
    if "today" in accepted:
        options["today"] = day
    if signals is not None:
        options["signals"] = signals
    if extraction is not None:
        options["extraction"] = extraction
    return adapter.decide_from_context(
        policy, context, policy_state=dict(policy_state) if policy_state else None, **options
    )
