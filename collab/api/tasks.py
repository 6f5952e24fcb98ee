"""/api/tasks: one task with its document, and its chat."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router, Status

from collab.api.auth import current_user
from collab.api.schemas import (
    MAX_PAGE,
    BadRequest,
    Error,
    MessageIn,
    MessagePage,
    MessagePageQuery,
    PathId,
    PostedMessageOut,
    TaskDetailOut,
    TaskStatusIn,
)
from collab.tasks.models import Document
from collab.tasks.selectors import TaskAccess, get_task_access, list_messages, page_size
from collab.tasks.serializers import message_event
from collab.tasks.services import post_message, set_task_status

router = Router(tags=["tasks"])

ERRORS = {400: BadRequest, 401: Error, 404: Error}


def task_detail(access: TaskAccess) -> dict[str, Any]:
    task = access.task
    # ``access`` already checked membership. Skip the Yjs snapshot column: it can be large and
    # the API only shows the derived text.
    document = Document.objects.only("text", "updated_at").filter(task_id=task.pk).first()
    return {
        "id": task.pk,
        "workspace_id": task.workspace_id,
        "title": task.title,
        "goal": task.goal,
        "status": task.status,
        "template": task.template,
        "created_at": task.created_at,
        "updated_at": task.updated_at,
        "role": access.membership.role,
        "can_edit": access.can_edit,
        "document": {
            "text": document.text if document else "",
            "updated_at": document.updated_at if document else None,
        },
    }


@router.get(
    "/{task_id}",
    response={200: TaskDetailOut, 401: Error, 404: Error},
    summary="Get a task with its document text and your role",
)
def get_task(request: HttpRequest, task_id: PathId) -> dict[str, Any]:
    return task_detail(get_task_access(current_user(request), task_id))


@router.put(
    "/{task_id}/status",
    response={200: TaskDetailOut, **ERRORS, 403: Error},
    summary="Change a task's status (owners and editors); open pages follow live",
)
def put_task_status(request: HttpRequest, task_id: PathId, payload: TaskStatusIn) -> dict[str, Any]:
    access = get_task_access(current_user(request), task_id)
    set_task_status(membership=access.membership, task=access.task, status=payload.status)
    return task_detail(access)


@router.get(
    "/{task_id}/messages",
    response={200: MessagePage, **ERRORS},
    summary="List a task's chat messages, newest page first",
)
def list_task_messages(
    request: HttpRequest, task_id: PathId, page: Query[MessagePageQuery]
) -> dict[str, Any]:
    access = get_task_access(current_user(request), task_id)
    limit = page.limit or min(page_size(), MAX_PAGE)
    # One extra row tells whether an older page exists without a second query.
    messages = list_messages(access.task, before=page.before, limit=limit + 1)
    has_more = len(messages) > limit
    messages = messages[-limit:]
    return {
        "messages": [message_event(message) for message in messages],
        "has_more": has_more,
        "next_before": messages[0].pk if has_more else None,
    }


@router.post(
    "/{task_id}/messages",
    response={201: PostedMessageOut, **ERRORS, 403: Error},
    summary="Post a chat message (owners and editors)",
)
def post_task_message(
    request: HttpRequest, task_id: PathId, payload: MessageIn
) -> Status[dict[str, Any]]:
    access = get_task_access(current_user(request), task_id)
    posted = post_message(membership=access.membership, task=access.task, body=payload.body)
    return Status(201, {**message_event(posted.message), "memory_notice": posted.memory_notice})
