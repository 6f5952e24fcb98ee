"""Every workspace comes with a working agent: its default one.

``workspace_created`` (a platform hook, ``collab.core.hooks``) calls
``create_default_agent``: "Assistant", or the name the owner picked, with the default
clarification policy, the site's default model (no model of its own, so a new site default
reaches it) and a colour no other agent of the workspace wears; it joins every task of the
workspace, and every new one (``Agent.joins_new_tasks``, through the ``task_created`` hook).
Owners rename, retune or switch it off on the Agents page like any other agent.
"""

from __future__ import annotations

import re

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction

from agents import policies
from agents.models import AGENT_NAME_RE, Agent
from collab.lib.colors import PALETTE
from collab.tasks.models import Task
from collab.workspaces.models import Membership, Role, Workspace

DEFAULT_AGENT_NAME = "Assistant"


def free_colour(workspace_id: int) -> str:
    """The first colour of the palette that no agent of the workspace wears yet."""
    taken = {
        colour.lower()
        for colour in Agent.objects.filter(workspace_id=workspace_id).values_list(
            "colour", flat=True
        )
    }
    free = [colour for colour in PALETTE if colour.lower() not in taken]
    if free:
        return free[0]
    count = Agent.objects.filter(workspace_id=workspace_id).count()
    return PALETTE[count % len(PALETTE)]


def default_policy() -> str:
    return policies.DEFAULT_POLICY  # read at call time: asking may change it


def check_agent_name(name: str) -> str:
    """The name a default agent gets ("" gives ``DEFAULT_AGENT_NAME``); a plain-words
    ``ValidationError`` for one that @mentions could not reach."""
    name = name.strip().lstrip("@") or DEFAULT_AGENT_NAME
    if not re.match(AGENT_NAME_RE, name):
        raise ValidationError(
            f"The agent's name {name!r} cannot be used in @mentions: use letters, digits, - and "
            "_, start with a letter, at most 32 characters."
        )
    return name


@transaction.atomic
def create_default_agent(*, workspace: Workspace, owner: User | None, name: str = "") -> Agent:
    """The workspace's default agent, on all its tasks (idempotent: an existing agent of that
    name is returned as it is)."""
    name = check_agent_name(name)
    existing = Agent.objects.filter(workspace=workspace, name__iexact=name).first()
    if existing is not None:
        return existing
    agent = Agent.objects.create(
        workspace=workspace,
        name=name,
        colour=free_colour(workspace.pk),
        policy_name=default_policy(),
        joins_new_tasks=True,
        created_by=owner,
    )
    agent.tasks.add(*Task.objects.filter(workspace=workspace))
    return agent


def join_new_task(*, task: Task) -> None:
    """A task was created: the workspace's agents that join every new task are put on it."""
    agents = list(Agent.objects.filter(workspace_id=task.workspace_id, joins_new_tasks=True))
    if agents:
        task.agents.add(*agents)


def add_missing_default_agents() -> int:
    """Give every workspace that has no agent at all its default agent (the data migration
    and ``manage.py`` use it); returns how many were created."""
    created = 0
    for workspace in Workspace.objects.filter(agents__isnull=True).distinct():
        owner = (
            Membership.objects.filter(workspace=workspace, role=Role.OWNER)
            .select_related("user")
            .order_by("id")
            .first()
        )
        create_default_agent(workspace=workspace, owner=owner.user if owner else None)
        created += 1
    return created
