"""Who may read review pages, and the scope they read.

Staff read everything. A workspace's owners read that workspace's review pages. Anyone else:
outsiders get 404 (never a hint that the workspace exists), other members 403, exactly like the
audit log pages.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Max
from django.http import Http404

from agents.models import Turn
from agents.review.models import ReviewSettings
from collab.tasks.models import Task
from collab.workspaces.models import Membership, Workspace
from collab.workspaces.selectors import AnyUser, get_membership


@dataclass(frozen=True)
class ReviewScope:
    """What a reader may review: one workspace, or everything (``workspace`` is None, staff)."""

    workspace: Workspace | None
    membership: Membership | None = None

    @property
    def workspace_id(self) -> int | None:
        return self.workspace.pk if self.workspace is not None else None


def list_workspaces_overview() -> list[Workspace]:
    """Every workspace, newest activity first, with its task and member counts (staff home)."""
    return list(
        Workspace.objects.annotate(
            task_count=Count("tasks", distinct=True),
            member_count=Count("memberships", distinct=True),
            last_activity=Max("tasks__updated_at"),
        ).order_by(F("last_activity").desc(nulls_last=True), "-pk")[:50]
    )


def list_recent_turns(*, limit: int = 15) -> list[Turn]:
    """The newest agent turns anywhere, with their agent, task and workspace (staff home)."""
    return list(
        Turn.objects.select_related("agent", "task__workspace").order_by("-created_at", "-pk")[
            :limit
        ]
    )


def require_staff(user: AnyUser) -> ReviewScope:
    if not user.is_authenticated or not user.is_staff:
        raise Http404("No such page.")
    return ReviewScope(workspace=None)


def get_review_scope(user: AnyUser, workspace_id: int) -> ReviewScope:
    """One workspace's review scope for its owners and for staff."""
    if not user.is_authenticated:
        raise Http404("No such workspace.")
    if user.is_staff:
        workspace = Workspace.objects.filter(pk=workspace_id).first()
        if workspace is None:
            raise Http404("No such workspace.")
        membership = Membership.objects.filter(workspace=workspace, user=user).first()
        return ReviewScope(workspace=workspace, membership=membership)
    membership = get_membership(user, workspace_id)
    if not membership.is_owner:
        raise PermissionDenied("Only owners review a workspace.")
    return ReviewScope(workspace=membership.workspace, membership=membership)


def get_review_task(user: AnyUser, task_id: int) -> tuple[Task, ReviewScope]:
    """A task for review, with the scope of its workspace."""
    if not user.is_authenticated:
        raise Http404("No such task.")
    task = Task.objects.select_related("workspace").filter(pk=task_id).first()
    if task is None:
        raise Http404("No such task.")
    scope = get_review_scope(user, task.workspace_id)
    return task, scope


def get_review_settings(workspace: Workspace) -> ReviewSettings:
    """The workspace's settings, or unsaved defaults."""
    found = ReviewSettings.objects.filter(workspace=workspace).first()
    return found if found is not None else ReviewSettings(workspace=workspace)
