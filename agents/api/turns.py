"""/api/tasks/{id}/turns: the agents' turns on a task, one with its actions, and Stop."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from agents import selectors
from agents.models import Turn, TurnStatus
from agents.services import edits as edit_services
from agents.services import turns as turn_services
from collab.api.auth import current_user
from collab.api.pagination import PageFields, PageQuery, cursor_page
from collab.api.schemas import BadRequest, Error, PathId
from collab.tasks.selectors import get_task_access

router = Router(tags=["turns"])

READ = {400: BadRequest, 401: Error, 404: Error}


class TurnOut(Schema):
    id: int
    task_id: int
    agent_id: int
    agent: str
    trigger: str = Field(description="What started it: a mention, an answer, a timeout, …")
    status: TurnStatus
    model_label: str = Field(description="Which model answered, in plain words.")
    error: str
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class ActionOut(Schema):
    id: int
    index: int
    kind: str = Field(description="`reply`, `edit`, `suggest`, `ask`, …")
    status: str
    payload: dict[str, Any]
    detail: str
    applied_at: datetime | None


class TurnDetailOut(TurnOut):
    actions: list[ActionOut] = Field(description="In the order the agent took them.")


class TurnPage(PageFields):
    turns: list[TurnOut] = Field(description="Oldest first.")


def turn_out(turn: Turn) -> dict[str, Any]:
    return {
        "id": turn.pk,
        "task_id": turn.task_id,
        "agent_id": turn.agent_id,
        "agent": turn.agent.name,
        "trigger": turn.trigger,
        "status": turn.status,
        "model_label": turn.model_label,
        "error": turn.error,
        "created_at": turn.created_at,
        "started_at": turn.started_at,
        "finished_at": turn.finished_at,
    }


@router.get(
    "/{task_id}/turns",
    response={200: TurnPage, **READ},
    summary="List the agents' turns on a task, newest page first (any member)",
)
def list_turns(request: HttpRequest, task_id: PathId, page: Query[PageQuery]) -> dict[str, Any]:
    access = get_task_access(current_user(request), task_id)
    turns = Turn.objects.filter(task=access.task).select_related("agent")
    found = cursor_page(turns, page)
    return {"turns": [turn_out(turn) for turn in found.rows], **found.fields()}


@router.get(
    "/{task_id}/turns/{turn_id}",
    response={200: TurnDetailOut, **READ},
    summary="Get a turn with its actions (any member)",
)
def get_turn(request: HttpRequest, task_id: PathId, turn_id: PathId) -> dict[str, Any]:
    access = get_task_access(current_user(request), task_id)
    turn = selectors.get_task_turn(access, turn_id)
    return {**turn_out(turn), "actions": list(turn.actions.order_by("index"))}


@router.post(
    "/{task_id}/turns/{turn_id}/cancel",
    response={200: TurnOut, **READ, 403: Error, 409: Error},
    summary="Stop a queued, running or waiting turn (owners and editors)",
)
def cancel_turn(request: HttpRequest, task_id: PathId, turn_id: PathId) -> dict[str, Any]:
    """409 when the turn has already finished (the service says so, as on the page)."""
    access = get_task_access(current_user(request), task_id)
    turn = selectors.get_task_turn(access, turn_id)
    return turn_out(turn_services.cancel_turn(membership=access.membership, turn=turn))


@router.post(
    "/{task_id}/edits/{action_id}/undo",
    response={200: ActionOut, **READ, 403: Error},
    summary="Undo an agent's direct edit, as its notice's Undo button (owners and editors)",
)
def undo_edit(request: HttpRequest, task_id: PathId, action_id: PathId) -> Any:
    """`action_id`: the edit's action (`kind: edit` in a turn's `actions`). The text it wrote
    goes back to what it replaced, as a minimal edit by you, so what others typed since stays.
    400 when that text changed since, or it was already undone."""
    access = get_task_access(current_user(request), task_id)
    action = selectors.get_task_edit(access, action_id)
    return edit_services.undo_agent_edit(membership=access.membership, action=action)
