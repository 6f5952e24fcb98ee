"""What the API reads and writes. Field names are the public contract: change with care."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from django.conf import settings
from ninja import Field, Schema
from ninja import Path as PathParam
from pydantic import AfterValidator, ConfigDict, JsonValue, field_validator
from pydantic.config import JsonDict

from collab.lib.text import unstorable_reason
from collab.tasks.models import Task, TaskStatus
from collab.tasks.task_templates import known_templates
from collab.workspaces.models import Role, Workspace

MAX_PAGE = 200
# What the task service accepts (collab/tasks/services.py: create_task), the columns' lengths.
TITLE_MAX_CHARS = Task._meta.get_field("title").max_length or 200
GOAL_MAX_CHARS = Task._meta.get_field("goal").max_length or 10_000
# Ids are 64-bit (BigAutoField): a larger number answers 400, never an overflow in the database.
MAX_ID = 2**63 - 1


def _storable(value: str) -> str:
    reason = unstorable_reason(value)
    if reason is not None:
        raise ValueError(reason)
    return value


# What ``str.strip()`` removes (``str.isspace``), spelled for a JSON-schema pattern.
_SPACE = r"\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"


def stripped_text_schema(max_chars: int) -> dict[str, JsonValue]:
    """JSON-schema keywords for a string the service strips and then wants 1 to ``max_chars``
    characters of (a task's title, a message's body): the schema says what the service refuses,
    so a blank value or an over-long one is invalid to both. The service keeps its own words
    for the refusal (``errors.title: ["A task needs a title."]``)."""
    core = f"[^{_SPACE}](?:[\\s\\S]{{0,{max_chars - 2}}}[^{_SPACE}])?"
    return {"minLength": 1, "pattern": f"^[{_SPACE}]*{core}[{_SPACE}]*$"}


# An object's id in a path (``/api/tasks/{task_id}``).
PathId = Annotated[int, PathParam(ge=1, le=MAX_ID)]

# A string the API stores: a NUL or a lone surrogate answers 400 with the reason, not a 500
# from the database or the encoder.
StoredText = Annotated[str, AfterValidator(_storable)]


def body_config(example: dict[str, JsonValue]) -> ConfigDict:
    """A JSON body's model config: unknown fields refused, and an example for the docs page."""
    return ConfigDict(extra="forbid", json_schema_extra={"example": example})


class Error(Schema):
    detail: str = Field(description="One sentence saying what went wrong.")


class BadRequest(Error):
    errors: dict[str, list[str]] = Field(
        description="Reasons per field; `__all__` holds reasons about the whole request."
    )


class WorkspaceOut(Schema):
    id: int
    name: str
    role: Role = Field(description="Your role in this workspace.")
    created_at: datetime


WORKSPACE_NAME_MAX_CHARS = Workspace._meta.get_field("name").max_length or 100


class WorkspaceIn(Schema):
    model_config = body_config({"name": "Acme", "agent_name": ""})

    name: StoredText = Field(
        description=f"Up to {WORKSPACE_NAME_MAX_CHARS} characters; not blank.",
        json_schema_extra=stripped_text_schema(WORKSPACE_NAME_MAX_CHARS),
    )
    agent_name: StoredText = Field(
        "", max_length=32, description="The name of its default agent; empty: the usual one."
    )


class InvitationAcceptIn(Schema):
    model_config = body_config({"token": "Xq3…"})

    token: str = Field(
        min_length=1,
        max_length=200,
        description="The last part of the invitation link (`/invite/<token>/`).",
    )


class TaskStatusIn(Schema):
    model_config = body_config({"status": "in_progress"})

    status: TaskStatus


class InstructionsOut(Schema):
    instructions: str = Field(description="What every agent of the workspace is told.")


class InstructionsIn(Schema):
    model_config = body_config(
        {"instructions": "Answer in French; keep documents under two pages."}
    )

    instructions: StoredText = Field(description="Up to 4,000 characters; empty clears them.")


class TaskOut(Schema):
    id: int
    workspace_id: int
    title: str
    goal: str
    status: TaskStatus
    template: str = Field(
        description="The task template it started from (see `template` on create); "
        "empty for a free-form task."
    )
    created_at: datetime
    updated_at: datetime


class DocumentOut(Schema):
    text: str = Field(description="The document as plain markdown text.")
    updated_at: datetime | None


class TaskDetailOut(TaskOut):
    role: Role = Field(description="Your role in the task's workspace.")
    can_edit: bool = Field(description="Whether you may post messages and change the task.")
    document: DocumentOut


class TaskIn(Schema):
    model_config = body_config(
        {"title": "Plan the offsite", "goal": "Agree on dates and a venue", "template": ""}
    )

    title: StoredText = Field(
        description="Up to 200 characters, not counting spaces around them; not blank.",
        json_schema_extra=stripped_text_schema(TITLE_MAX_CHARS),
    )
    goal: StoredText = Field(
        "",
        description="What should be true when the task is done; up to 10,000 characters.",
        json_schema_extra={"maxLength": GOAL_MAX_CHARS},
    )
    template: str = Field(
        "",
        max_length=40,
        description="Start from a task template: "
        + ", ".join(f"`{kind}`" for kind in sorted(known_templates()))
        + " (the document starts with its headings). Empty for a free-form task. An unknown "
        "name answers 400.",
    )


def _empty_allowed(schema: JsonDict) -> None:
    """The field's schema also allows "" (which the validator reads as "left out")."""
    choices = schema.get("anyOf")
    if isinstance(choices, list):
        choices.append({"type": "string", "const": ""})


class TaskFilter(Schema):
    # "" is in the schema as it is in the behaviour: `?status=` lists every task.
    status: TaskStatus | None = Field(
        None,
        description="Only tasks in this status; empty (or left out) for all.",
        json_schema_extra=_empty_allowed,
    )

    @field_validator("status", mode="before")
    @classmethod
    def empty_means_all(cls, value: object) -> object:
        return None if value == "" else value


class MessageOut(Schema):
    id: int
    task_id: int
    kind: str = Field(description="`human`, `agent` or `system`.")
    author: str = Field(description="The author's display name when the message was posted.")
    body: str = Field(description="Markdown source.")
    created_at: datetime


class PostedMessageOut(MessageOut):
    memory_notice: str = Field(
        "",
        description="What a “remember that …” / “forget …” in the body did, for its author "
        "only (empty for other messages).",
    )


class MessageIn(Schema):
    model_config = body_config({"body": "@Mira can you draft the agenda?"})

    body: StoredText = Field(
        description=f"Markdown, up to {settings.CHAT_MESSAGE_MAX_CHARS:,} characters, not "
        "counting spaces around them; not blank.",
        json_schema_extra=stripped_text_schema(settings.CHAT_MESSAGE_MAX_CHARS),
    )


class MessagePageQuery(Schema):
    before: int | None = Field(
        None, ge=1, le=MAX_ID, description="Only messages with a smaller id (the previous page)."
    )
    limit: int | None = Field(
        None, ge=1, le=MAX_PAGE, description=f"Page size, at most {MAX_PAGE}."
    )


class MessagePage(Schema):
    messages: list[MessageOut] = Field(description="Oldest first.")
    has_more: bool = Field(description="Whether older messages exist.")
    next_before: int | None = Field(
        description="Pass as `before` to get the previous (older) page; null when none."
    )
