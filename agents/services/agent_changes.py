"""Saving an agent from its page, and telling open task pages about it.

The agent services create and update the row; this adds what the agents page promises: every
open page of the agent's tasks gets its card again on commit (a rename, a new colour, a model
switched, the agent switched off), without a reload.
"""

from __future__ import annotations

from functools import partial
from typing import Any

from django.db import transaction

from agents.defaults import free_colour
from agents.models import Agent
from agents.outbox import events
from agents.services import agents as agent_services
from collab.tasks.models import Task, TaskStatus
from collab.workspaces.models import Membership

# Open tasks of the workspace whose pages are told of a new or changed agent (their "Agent to
# add" list), newest first; older ones show it on their next load.
ANNOUNCE_OPEN_TASKS = 20


def _announce(agent: Agent) -> None:
    """Every task the agent is on gets its card again, and the workspace's open tasks their
    "Agent to add" list (a new agent, a rename, one switched off), on commit."""
    on_tasks = set(agent.tasks.values_list("pk", flat=True))
    open_tasks = (
        Task.objects.filter(workspace_id=agent.workspace_id)
        .exclude(status=TaskStatus.DONE)
        .order_by("-pk")
        .values_list("pk", flat=True)[:ANNOUNCE_OPEN_TASKS]
    )
    for task_id in sorted(on_tasks | set(open_tasks)):
        transaction.on_commit(partial(events.task_agents_changed, task_id))


@transaction.atomic
def create_agent(*, membership: Membership, **fields: Any) -> Agent:
    if not fields.get("colour"):
        fields["colour"] = free_colour(membership.workspace_id)
    agent = agent_services.create_agent(membership=membership, **fields)
    _announce(agent)  # on no task yet, but on the "Agent to add" list of open task pages
    return agent


@transaction.atomic
def update_agent(*, membership: Membership, agent: Agent, **fields: Any) -> Agent:
    agent = agent_services.update_agent(membership=membership, agent=agent, **fields)
    _announce(agent)
    return agent
