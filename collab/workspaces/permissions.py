"""The role checks services make before they change anything: one of each, one message each.

Platform and agents services call these (agents' own owner-only checks say what only owners
may do there). Reads go through selectors, which 404 for outsiders; these raise
``PermissionDenied`` (403) for members who may read but not do.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied

from collab.workspaces.models import Membership

VIEWERS_CANNOT_CHANGE = "Viewers can read but not change this workspace."


def require_editor(membership: Membership) -> None:
    """Owners and editors change a workspace's tasks, documents, chat and agents; viewers read."""
    if not membership.can_edit:
        raise PermissionDenied(VIEWERS_CANNOT_CHANGE)


def require_same_workspace(membership: Membership, *objects: Any) -> None:
    """Every object (a task, an agent, ...: anything with ``workspace_id``) is in the
    membership's workspace."""
    for obj in objects:
        if obj.workspace_id != membership.workspace_id:
            meta = getattr(obj, "_meta", None)
            what = f"That {meta.verbose_name}" if meta is not None else "That"
            raise PermissionDenied(f"{what} belongs to another workspace.")


def require_task_editor(membership: Membership, task: Any) -> None:
    """The membership may change ``task``: an owner or editor of the task's workspace."""
    require_editor(membership)
    require_same_workspace(membership, task)


def require_owner(membership: Membership) -> None:
    """Owners alone see and manage members and invitations."""
    if not membership.is_owner:
        raise PermissionDenied("Only owners manage members.")
