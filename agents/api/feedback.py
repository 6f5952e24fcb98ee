"""/api/tasks/{id}/feedback: rating an agent's work (mounted by the API root, collab/api/api.py,
beside the platform's task routes)."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.http import HttpRequest
from ninja import Field, Router, Schema

from agents.selectors import get_feedback_target
from agents.services.feedback import record_feedback
from collab.api.auth import current_user
from collab.api.schemas import MAX_ID, BadRequest, Error, PathId, StoredText, body_config
from collab.tasks.selectors import get_task_access

router = Router(tags=["tasks"])

ERRORS = {400: BadRequest, 401: Error, 404: Error}


class FeedbackIn(Schema):
    model_config = body_config(
        {"target_kind": "message", "target_id": 42, "rating": "up", "comment": "Spot on"}
    )

    target_kind: Literal["message", "question", "suggestion", "edit"] = Field(
        description="What is rated: an agent chat message, a question, a suggestion or an edit."
    )
    target_id: int = Field(
        ge=1, le=MAX_ID, description="Its id (for an edit: the edit action's id)."
    )
    rating: Literal["up", "down"] | None = Field(
        None, description="Thumbs up or down; null clears the rating; omitted keeps it."
    )
    comment: StoredText | None = Field(
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


@router.post(
    "/{task_id}/feedback",
    response={200: FeedbackOut, **ERRORS},
    summary="Rate an agent's message, question, suggestion or edit (any member)",
)
def give_feedback(request: HttpRequest, task_id: PathId, payload: FeedbackIn) -> dict[str, Any]:
    """One row per person and target: posting again changes it. Fields left out keep their
    stored value; ``rating: null`` clears the rating."""
    access = get_task_access(current_user(request), task_id)
    target = get_feedback_target(access, payload.target_kind, payload.target_id)
    given = payload.model_fields_set
    arguments: dict[str, Any] = {}
    if "rating" in given:
        arguments["rating"] = payload.rating or ""
    if "comment" in given:
        arguments["comment"] = payload.comment or ""
    if "unnecessary" in given:
        arguments["unnecessary"] = bool(payload.unnecessary)
    row = record_feedback(membership=access.membership, target=target, **arguments)
    return {
        "id": row.pk,
        "target_kind": row.target_kind,
        "target_id": row.target_id,
        "turn_id": row.turn_id,
        "rating": row.rating or None,
        "comment": row.comment,
        "unnecessary": row.unnecessary_question,
        "learned_reward": row.learned_reward,
        "updated_at": row.updated_at,
    }
