"""What the API reads and writes. Field names are the public contract: change with care."""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from ninja import Field, Schema
from pydantic import ConfigDict, field_validator

from collab.tasks.models import TaskStatus
from collab.tasks.task_templates import known_templates
from collab.workspaces.models import Role

MAX_PAGE = 200


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

    instructions: str = Field(description="Up to 4,000 characters; empty clears them.")


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

    title: str = Field(description="Up to 200 characters.")
    goal: str = Field("", description="What should be true when the task is done.")
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

    body: str = Field(description="Markdown, up to 20,000 characters.")


class MessagePageQuery(Schema):
    before: int | None = Field(
        None, ge=1, description="Only messages with a smaller id (the previous page)."
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


class FeedbackIn(Schema):
    model_config = ConfigDict(extra="forbid")

    target_kind: Literal["message", "question", "suggestion", "edit"] = Field(
        description="What is rated: an agent chat message, a question, a suggestion or an edit."
    )
    target_id: int = Field(ge=1, description="Its id (for an edit: the edit action's id).")
    rating: Literal["up", "down"] | None = Field(
        None, description="Thumbs up or down; null clears the rating; omitted keeps it."
    )
    comment: str | None = Field(
        None, max_length=1000, description="Optional comment; omitted keeps the stored one."
    )
    unnecessary: bool | None = Field(
        None, description='Questions only: "this question was unnecessary".'
    )


class FeedbackOut(Schema):
    id: int
    target_kind: str
    target_id: int
    turn_id: int | None
    rating: str | None
    comment: str
    unnecessary: bool
    learned_reward: float | None = Field(
        description="The reward a learning policy took from this feedback (at most once)."
    )
    updated_at: datetime
