"""Builders for test data. The cast: alice owns, bob edits, carol views, mallory is an outsider."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import User

from collab.core import hooks
from collab.tasks.models import Task
from collab.tasks.services import create_task
from collab.workspaces.models import Membership, Role, Workspace
from collab.workspaces.services import create_workspace

PASSWORD = "correct horse battery staple"


def make_user(username: str) -> User:
    return get_user_model().objects.create_user(username=username, password=PASSWORD)


def make_workspace(owner: User, name: str = "Acme", *, default_agent: bool = False) -> Workspace:
    """A workspace owned by ``owner``. Without ``default_agent`` it comes bare, without the
    default agent every real workspace gets (``agents/defaults.py``), so that tests about
    other things see only the agents they create; tests of the default agent ask for it."""
    if default_agent:
        return create_workspace(owner=owner, name=name)
    with hooks.workspace_created.replaced():
        return create_workspace(owner=owner, name=name)


def add_member(workspace: Workspace, user: User, role: str) -> Membership:
    return Membership.objects.create(workspace=workspace, user=user, role=role)


def membership_of(workspace: Workspace, user: User) -> Membership:
    return Membership.objects.select_related("workspace", "user").get(
        workspace=workspace, user=user
    )


def make_task(workspace: Workspace, title: str = "Plan the offsite", goal: str = "") -> Task:
    owner = workspace.memberships.filter(role=Role.OWNER).select_related("workspace", "user")[0]
    return create_task(membership=owner, title=title, goal=goal)
