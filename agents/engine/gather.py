"""The second stage, gather: one read of everything a turn may use, and no writes.

``TurnInput`` carries the claimed turn and its resolved model profile, the task's document
(its text, for the prompt; its id, for the agent's presence), the context the turn is shown
(``agents.engine.context.build_context``: task, goal, template, document text, the chat
window, notes, answered questions, the requester and their memory facts as data), the shipped
template kind,
and the options a registered signal provider (the evaluation harness's oracle) gives for it.
The learning policy's state row is the one thing read later: ``decide`` reads it under its
lock, so that two concurrent turns never lose each other's update.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from agents.engine.context import build_context
from agents.engine.policies_bridge import provided_options
from agents.models import ModelProfile, Turn
from agents.models.records import TurnContext
from agents.policies.understand import shipped_template_kind
from agents.skills import Route, request_of, route
from collab.tasks.models import Document


@dataclass(frozen=True)
class TurnInput:
    """Everything a turn decides and produces from, read once."""

    turn: Turn
    profile: ModelProfile
    document: Document | None  # its text and id only (None: the task has none)
    context: TurnContext  # what the turn is shown, stored on the turn with its decision
    template_kind: str | None  # the task's shipped template (None: free-form, or not shipped)
    provided: Mapping[str, Any] | None  # a signal provider's options (None: none answered)

    @property
    def policy_name(self) -> str:
        return self.turn.agent.policy_name

    @cached_property
    def request(self) -> str:
        """The person's request (the turn's prompt, else the newest human message)."""
        return request_of(self.context)

    @cached_property
    def route(self) -> Route:
        """The skill the request asks for, routed once per turn: the understanding, the skills
        producer's ``accepts`` and its answer, and the model producer's check all read it."""
        return route(self.request)

    @property
    def timed_out(self) -> bool:
        """Nobody answered the agent's question in time: this turn goes ahead on a guess."""
        return bool(self.turn.inputs.get("timed_out"))

    def summary(self) -> str:
        ctx = self.context
        return (
            f"{len(ctx['messages'])} messages, document {ctx['document_chars']} chars, "
            f"{len(ctx['memory_items'])} memory facts, template {self.template_kind or 'none'}"
        )


def read_document(turn: Turn) -> Document | None:
    """The task's document: its text (not the Yjs state) for the prompt, its id for presence."""
    return Document.objects.filter(task_id=turn.task_id).only("text").first()


def gather(turn: Turn, profile: ModelProfile, *, document: Document | None) -> TurnInput:
    """The turn's input (no writes). ``document``: ``read_document``'s, read once per delivery."""
    context = build_context(turn, profile, document=document)
    return TurnInput(
        turn=turn,
        profile=profile,
        document=document,
        context=context,
        template_kind=shipped_template_kind(context),
        provided=provided_options(dict(context)),
    )
