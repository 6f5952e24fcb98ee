"""Reads of tasks and chat that check membership through the workspace selectors."""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404

from collab.tasks.models import Message, Task, TaskStatus
from collab.workspaces.models import Membership, Workspace
from collab.workspaces.selectors import AnyUser, get_membership


@dataclass(frozen=True)
class TaskAccess:
    """A task together with the reader's membership (for role checks)."""

    task: Task
    membership: Membership

    @property
    def can_edit(self) -> bool:
        return self.membership.can_edit


def get_task_access(user: AnyUser, task_id: int) -> TaskAccess:
    if not user.is_authenticated:
        raise Http404("No such task.")
    task = Task.objects.select_related("workspace").filter(pk=task_id).first()
    if task is None:
        raise Http404("No such task.")
    membership = get_membership(user, task.workspace_id)
    return TaskAccess(task=task, membership=membership)


def get_task_for_user(user: AnyUser, task_id: int) -> Task:
    return get_task_access(user, task_id).task


def list_tasks(workspace: Workspace, *, status: str | None = None) -> QuerySet[Task]:
    tasks = workspace.tasks.all()
    if status:
        if status not in TaskStatus.values:
            raise ValueError(f"Unknown status {status!r}.")
        tasks = tasks.filter(status=status)
    return tasks.order_by("-updated_at", "-id")


def list_messages(
    task: Task, *, before: int | None = None, limit: int | None = None
) -> list[Message]:
    """The newest ``limit`` messages older than ``before``, oldest first."""
    limit = page_size() if limit is None else limit
    messages = task.messages.all()
    if before is not None:
        messages = messages.filter(id__lt=before)
    page = list(messages.order_by("-id")[:limit])
    page.reverse()
    return page


def page_size() -> int:
    return int(settings.CHAT_PAGE_SIZE)
