"""/api/workspaces: the caller's workspaces and their tasks."""

from __future__ import annotations

from django.db.models import F, QuerySet
from django.http import HttpRequest
from ninja import Query, Router, Status

from collab.api.auth import current_user
from collab.api.schemas import (
    BadRequest,
    Error,
    InstructionsIn,
    InstructionsOut,
    PathId,
    TaskDetailOut,
    TaskFilter,
    TaskIn,
    TaskOut,
    WorkspaceIn,
    WorkspaceOut,
)
from collab.api.tasks import task_detail
from collab.tasks.models import Task
from collab.tasks.selectors import TaskAccess, list_tasks
from collab.tasks.services import create_task
from collab.workspaces.models import Workspace
from collab.workspaces.selectors import get_membership, list_workspaces_for_user
from collab.workspaces.services import create_workspace, update_workspace_instructions

router = Router(tags=["workspaces"])

ERRORS = {400: BadRequest, 401: Error, 404: Error}


@router.get("", response={200: list[WorkspaceOut], 401: Error}, summary="List your workspaces")
def list_workspaces(request: HttpRequest) -> QuerySet[Workspace]:
    # The selector joins the caller's membership; its role comes along from the same row.
    return list_workspaces_for_user(current_user(request)).annotate(role=F("memberships__role"))


@router.post(
    "",
    response={201: WorkspaceOut, 400: BadRequest, 401: Error},
    summary="Create a workspace: you are its owner",
)
def create_your_workspace(request: HttpRequest, payload: WorkspaceIn) -> Status[dict[str, object]]:
    """The workspace list's form: the workspace comes with what every new one has (its default
    agent, named `agent_name` when given)."""
    workspace = create_workspace(
        owner=current_user(request), name=payload.name, agent_name=payload.agent_name
    )
    return Status(
        201,
        {
            "id": workspace.pk,
            "name": workspace.name,
            "role": "owner",
            "created_at": workspace.created_at,
        },
    )


@router.get(
    "/{workspace_id}/tasks",
    response={200: list[TaskOut], **ERRORS},
    summary="List a workspace's tasks, most recently active first",
)
def list_workspace_tasks(
    request: HttpRequest, workspace_id: PathId, filters: Query[TaskFilter]
) -> QuerySet[Task]:
    membership = get_membership(current_user(request), workspace_id)
    return list_tasks(membership.workspace, status=filters.status)


@router.post(
    "/{workspace_id}/tasks",
    response={201: TaskDetailOut, **ERRORS, 403: Error},
    summary="Create a task (owners and editors)",
)
def create_workspace_task(
    request: HttpRequest, workspace_id: PathId, payload: TaskIn
) -> Status[dict[str, object]]:
    membership = get_membership(current_user(request), workspace_id)
    task = create_task(
        membership=membership, title=payload.title, goal=payload.goal, template=payload.template
    )
    return Status(201, task_detail(TaskAccess(task=task, membership=membership)))


@router.get(
    "/{workspace_id}/instructions",
    response={200: InstructionsOut, 401: Error, 404: Error},
    summary="Read the workspace instructions every agent is given",
)
def get_workspace_instructions(request: HttpRequest, workspace_id: PathId) -> dict[str, str]:
    membership = get_membership(current_user(request), workspace_id)
    return {"instructions": membership.workspace.instructions}


@router.put(
    "/{workspace_id}/instructions",
    response={200: InstructionsOut, **ERRORS, 403: Error},
    summary="Change the workspace instructions (owners)",
)
def put_workspace_instructions(
    request: HttpRequest, workspace_id: PathId, payload: InstructionsIn
) -> dict[str, str]:
    membership = get_membership(current_user(request), workspace_id)
    workspace = update_workspace_instructions(actor=membership, instructions=payload.instructions)
    return {"instructions": workspace.instructions}
