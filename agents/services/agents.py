"""Managing agents: creating and changing them, putting them on tasks and taking them off."""

from __future__ import annotations

from functools import partial
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction

from agents.models import AGENT_FIELDS, Agent
from agents.outbox import events
from agents.policies.registry import known_policy
from agents.services.access import require_owner
from collab.tasks.models import Task
from collab.workspaces.models import Membership
from collab.workspaces.permissions import require_editor, require_same_workspace


def _check_agent(agent: Agent) -> None:
    agent.full_clean(exclude=["workspace", "created_by"], validate_unique=False)
    clash = Agent.objects.filter(workspace_id=agent.workspace_id, name__iexact=agent.name).exclude(
        pk=agent.pk
    )
    if clash.exists():
        raise ValidationError({"name": "Another agent in this workspace has that name."})
    if not known_policy(agent.policy_name):
        raise ValidationError({"policy_name": f"Unknown policy {agent.policy_name!r}."})


@transaction.atomic
def create_agent(*, membership: Membership, name: str, **fields: Any) -> Agent:
    require_owner(membership)
    unknown = set(fields) - set(AGENT_FIELDS)
    if unknown:
        raise TypeError(f"Unknown agent fields: {sorted(unknown)}")
    agent = Agent(workspace=membership.workspace, name=name.strip(), created_by=membership.user)
    for key, value in fields.items():
        setattr(agent, key, value)
    _check_agent(agent)
    agent.save()
    return agent


@transaction.atomic
def update_agent(*, membership: Membership, agent: Agent, **fields: Any) -> Agent:
    require_owner(membership)
    require_same_workspace(membership, agent)
    unknown = set(fields) - set(AGENT_FIELDS)
    if unknown:
        raise TypeError(f"Unknown agent fields: {sorted(unknown)}")
    for key, value in fields.items():
        setattr(agent, key, value.strip() if key == "name" else value)
    _check_agent(agent)
    agent.save()
    return agent


@transaction.atomic
def add_agent_to_task(*, membership: Membership, agent: Agent, task: Task) -> None:
    require_editor(membership)
    require_same_workspace(membership, agent, task)
    join_task(agent, task)


@transaction.atomic
def remove_agent_from_task(*, membership: Membership, agent: Agent, task: Task) -> None:
    require_editor(membership)
    require_same_workspace(membership, agent, task)
    agent.tasks.remove(task)
    transaction.on_commit(partial(events.task_agents_changed, task.pk))


def join_task(agent: Agent, task: Task, *, on_task: bool | None = None) -> None:
    """Put ``agent`` on ``task`` unless it is already there (``on_task``: whether it is, when
    the caller knows); open pages then get its card on commit, before anything its turns
    publish (the turn is enqueued after this is registered)."""
    if on_task is None:
        on_task = agent.tasks.filter(pk=task.pk).exists()
    if not on_task:
        agent.tasks.add(task)
        transaction.on_commit(partial(events.task_agents_changed, task.pk))
