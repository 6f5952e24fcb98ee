"""What the API reads and writes. Field names are the public contract: change with care."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from ninja import Field, Schema
from ninja import Path as PathParam
from pydantic import AfterValidator, ConfigDict, field_validator

from collab.lib.text import unstorable_reason
from collab.tasks.models import TaskStatus
from collab.tasks.task_templates import known_templates
from collab.workspaces.models import Role

MAX_PAGE = 200
# Ids are 64-bit (BigAutoField): a larger number answers 400, never an overflow in the database.
MAX_ID = 2**63 - 1


def _storable(value: str) -> str:
    reason = unstorable_reason(value)
    if reason is not None:
        raise ValueError(reason)
    return value


# An object's id in a path (``/api/tasks/{task_id}``).
PathId = Annotated[int, PathParam(ge=1, le=MAX_ID)]

# A string the API stores: a NUL or a lone surrogate answers 400 with the reason, not a 500
# from the database or the encoder.
StoredText = Annotated[str, AfterValidator(_storable)]


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


class InstructionsOut(Schema):
    instructions: str = Field(description="What every agent of the workspace is told.")


class InstructionsIn(Schema):
    model_config = ConfigDict(extra="forbid")

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
    model_config = ConfigDict(extra="forbid")

    title: StoredText = Field(description="Up to 200 characters.")
    goal: StoredText = Field("", description="What should be true when the task is done.")
    template: str = Field(
        "",
        max_length=40,
        description="Start from a task template: "
        + ", ".join(f"`{kind}`" for kind in sorted(known_templates()))
        + " (the document starts with its headings). Empty for a free-form task. An unknown "
        "name answers 400.",
    )


class TaskFilter(Schema):
    status: TaskStatus | None = Field(None, description="Only tasks in this status; empty for all.")

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
    model_config = ConfigDict(extra="forbid")

    body: StoredText = Field(description="Markdown, up to 20,000 characters.")


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
