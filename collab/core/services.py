"""Project-wide services that span several apps (demo data for a first look)."""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import models, transaction

from collab.core import hooks
from collab.tasks.models import Task
from collab.tasks.services import create_task, post_message
from collab.workspaces.models import Membership, Role, Workspace
from collab.workspaces.services import create_workspace

DEMO_WORKSPACE_NAME = "Demo workspace"
DEMO_TASK_TITLE = "Plan the team offsite"
DEMO_TASK_GOAL = (
    "Draft a two-day offsite plan for eight people in early spring: a venue within two hours "
    "by train, a budget under 4,000 EUR, and an agenda mixing planning sessions with time off."
)
DEMO_MESSAGES = (
    "Welcome to the demo task! This chat is live: open this page in a second window and "
    "messages posted in one appear in the other without a reload.",
    "Messages are **markdown**:\n\n- lists\n- `code`\n- [links](https://example.org)\n\n"
    "Raw HTML such as <script>alert(1)</script> is shown as text, never run.",
)


@dataclass(frozen=True)
class DemoSeed:
    user: User
    workspace: Workspace
    task: Task
    password: str | None  # set only when the user was created by this call; shown once
    created: tuple[str, ...]  # what this call created: "user", "workspace", "task"


def _validate_username(username: str) -> str:
    username = username.strip()
    user_model = get_user_model()
    field = user_model._meta.get_field(user_model.USERNAME_FIELD)
    assert isinstance(field, models.Field)
    try:
        return str(field.clean(username, None))
    except ValidationError as exc:
        raise ValidationError({"username": exc.messages}) from exc


@transaction.atomic
def seed_demo(*, username: str) -> DemoSeed:
    """Give ``username`` a demo workspace with one task and a short chat.

    Creates only what is missing (the user, with a random password; the workspace that the user
    owns, named ``DEMO_WORKSPACE_NAME``; the task ``DEMO_TASK_TITLE`` in it, with its goal and
    chat), so running it again changes nothing. An existing user's password is never touched.
    """
    username = _validate_username(username)
    created: list[str] = []
    password: str | None = None

    user_model = get_user_model()
    user = user_model.objects.filter(username=username).first()
    if user is None:
        password = secrets.token_urlsafe(12)
        user = user_model.objects.create_user(username=username, password=password)
        created.append("user")

    membership = (
        Membership.objects.select_related("workspace", "user")
        .filter(user=user, role=Role.OWNER, workspace__name=DEMO_WORKSPACE_NAME)
        .order_by("workspace_id")
        .first()
    )
    if membership is None:
        workspace = create_workspace(owner=user, name=DEMO_WORKSPACE_NAME)
        membership = Membership.objects.select_related("workspace", "user").get(
            workspace=workspace, user=user
        )
        created.append("workspace")

    task = Task.objects.filter(workspace=membership.workspace, title=DEMO_TASK_TITLE).first()
    if task is None:
        task = create_task(membership=membership, title=DEMO_TASK_TITLE, goal=DEMO_TASK_GOAL)
        for body in DEMO_MESSAGES:
            post_message(membership=membership, task=task, body=body)
        created.append("task")

    hooks.demo_seeded(task=task, owner=user)  # the agents' writer and reviewer
    return DemoSeed(
        user=user,
        workspace=membership.workspace,
        task=task,
        password=password,
        created=tuple(created),
    )
