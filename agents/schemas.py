"""Structured output: what a model may decide in one turn.

Every string and list is bounded (``maxLength`` / ``maxItems`` in the JSON schema): a
grammar-constrained small model otherwise runs out of tokens in the middle of a string.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

ActionKindLiteral = Literal["reply", "ask", "suggest", "edit", "note", "remember", "finish"]

TEXT_MAX = 1500
FIND_MAX = 600
PERSON_MAX = 150
KEY_MAX = 40
VALUE_MAX = 120
ACTIONS_MAX = 3


class ActionOut(BaseModel):
    """One action. ``text`` is the reply, question, note, the reason for a change, or what to
    remember about ``person``."""

    model_config = ConfigDict(extra="forbid")

    kind: ActionKindLiteral
    text: str = Field(default="", max_length=TEXT_MAX)
    find: str = Field(
        default="",
        max_length=FIND_MAX,
        description="suggest/edit: exact document text to replace; empty appends",
    )
    replace: str = Field(default="", max_length=TEXT_MAX, description="suggest/edit: new text")
    person: str = Field(
        default="",
        max_length=PERSON_MAX,
        description="remember: the username of the person here it is about",
    )
    key: str = Field(
        default="",
        max_length=KEY_MAX,
        description=(
            "remember: optional key (spelling, list_style, length, tone, date_format, "
            "headings, asking)"
        ),
    )
    value: str = Field(default="", max_length=VALUE_MAX, description="remember: the slot's value")


class DecisionOut(BaseModel):
    """A turn's decision: one to three actions, applied in order."""

    model_config = ConfigDict(extra="forbid")

    actions: list[ActionOut] = Field(min_length=1, max_length=ACTIONS_MAX)


class SmallDecisionOut(BaseModel):
    """The narrow step that small local models are kept to: one reply or one question."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["reply", "ask"]
    text: str = Field(min_length=1, max_length=400)

    def to_decision(self) -> DecisionOut:
        return DecisionOut(actions=[ActionOut(kind=self.kind, text=self.text)])


@cache
def json_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema a provider constrains its output with (bounds included). Do not mutate."""
    return model.model_json_schema()


def streamed_text(partial: Any) -> str:
    """The human-readable text inside a partially parsed decision, for live streaming."""
    if not isinstance(partial, dict):
        return ""
    actions = partial.get("actions")
    if isinstance(actions, list) and actions and isinstance(actions[0], dict):
        partial = actions[0]
    text = partial.get("text")
    return text if isinstance(text, str) else ""
