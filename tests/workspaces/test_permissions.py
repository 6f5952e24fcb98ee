"""One role check for every service that changes a workspace's tasks: the same refusal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied

from collab.tasks.documents import restore_document_version
from collab.tasks.models import Task
from collab.tasks.services import create_task, post_message, set_task_status
from collab.workspaces.models import Workspace
from collab.workspaces.permissions import VIEWERS_CANNOT_CHANGE
from tests.factories import make_task, make_workspace, membership_of

CHANGES: dict[str, Callable[..., Any]] = {
    "create a task": lambda m, t: create_task(membership=m, title="Mine"),
    "post a message": lambda m, t: post_message(membership=m, task=t, body="Hello"),
    "change the status": lambda m, t: set_task_status(membership=m, task=t, status="done"),
    "restore a version": lambda m, t: restore_document_version(membership=m, task=t, version_id=1),
}


@pytest.mark.parametrize("change", CHANGES)
def test_a_viewer_is_refused_every_change_with_the_same_message(
    change: str, workspace: Workspace, carol: User, task: Task
) -> None:
    with pytest.raises(PermissionDenied) as refused:
        CHANGES[change](membership_of(workspace, carol), task)

    assert str(refused.value) == VIEWERS_CANNOT_CHANGE


@pytest.mark.parametrize("change", [c for c in CHANGES if c != "create a task"])
def test_an_editor_cannot_change_another_workspaces_task(
    change: str, workspace: Workspace, bob: User, mallory: User
) -> None:
    elsewhere = make_task(make_workspace(mallory, "Elsewhere"))

    with pytest.raises(PermissionDenied) as refused:
        CHANGES[change](membership_of(workspace, bob), elsewhere)

    assert str(refused.value) == "That task belongs to another workspace."
