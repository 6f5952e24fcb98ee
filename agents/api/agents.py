"""/api/workspaces/{id}/agents (owners manage them) and /api/tasks/{id}/agents (owners and
editors put them on a task and take them off), through the services of the agents page."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest
from ninja import Field, Router, Schema, Status

from agents import profiles, selectors
from agents.api.turns import TurnOut, turn_out
from agents.models import Agent, AgentMode
from agents.schemas import TEXT_MAX
from agents.services import agent_changes
from agents.services import agents as agent_services
from agents.services import turns as turn_services
from collab.api.auth import current_user
from collab.api.schemas import MAX_ID, BadRequest, Error, PathId, StoredText, body_config
from collab.tasks.selectors import get_task_access
from collab.workspaces.selectors import get_membership

workspace_router = Router(tags=["agents"])
task_router = Router(tags=["agents"])

READ = {400: BadRequest, 401: Error, 404: Error}
WRITE = {**READ, 403: Error}


class AgentOut(Schema):
    id: int
    workspace_id: int
    name: str = Field(description="Used for @mentions.")
    colour: str
    instructions: str
    model_profile_id: int | None = Field(description="null: the site's default model.")
    policy_name: str = Field(description="Its clarification policy (docs/policies.md).")
    mode: AgentMode
    on_mention: bool
    on_every_message: bool
    on_idle_document: bool
    ask_button: bool
    question_timeout_minutes: int
    is_active: bool = Field(description="false: switched off (disabled), takes no turns.")
    learn_per_person: bool
    joins_new_tasks: bool
    created_at: datetime


class AgentFields(Schema):
    """Every field optional: on update, what you leave out keeps its value."""

    model_config = body_config({"name": "Mira", "mode": "suggest_only", "on_mention": True})

    colour: str | None = Field(None, max_length=7, description="Like `#6b5bd6`.")
    model_profile_id: int | None = Field(
        None,
        ge=1,
        le=MAX_ID,
        description="A model from `GET /api/models` (left out: unchanged; a new agent uses "
        "the site's default).",
    )
    instructions: StoredText | None = Field(None, max_length=4000)
    policy_name: str | None = Field(None, max_length=40)
    mode: AgentMode | None = None
    on_mention: bool | None = None
    on_every_message: bool | None = None
    on_idle_document: bool | None = None
    ask_button: bool | None = None
    question_timeout_minutes: int | None = Field(None, ge=0, le=7 * 24 * 60)
    is_active: bool | None = Field(None, description="false disables the agent.")
    learn_per_person: bool | None = None
    joins_new_tasks: bool | None = None


class AgentUpdateIn(AgentFields):
    name: StoredText | None = Field(None, max_length=32)


class AgentIn(AgentFields):
    name: StoredText = Field(max_length=32, description="Letters, digits, - and _.")


class AskIn(Schema):
    model_config = body_config({"prompt": "Draft the agenda"})

    prompt: StoredText = Field(
        "",
        max_length=TEXT_MAX,
        description="What to ask; posted to the chat as yours, the agent mentioned. Empty: the "
        "agent works on the task as it stands.",
    )


class TaskAgentIn(Schema):
    model_config = body_config({"agent_id": 3})

    agent_id: int = Field(ge=1, le=MAX_ID, description="An agent of the task's workspace.")


def _given(payload: Schema) -> dict[str, Any]:
    given = {key: value for key, value in payload.model_dump().items() if value is not None}
    if "model_profile_id" in given:  # the agents page's choices, no other
        profile_id = given.pop("model_profile_id")
        profile = profiles.user_choices().filter(pk=profile_id).first()
        if profile is None:
            raise ValidationError({"model_profile_id": f"No model {profile_id}: see /api/models."})
        given["model_profile"] = profile
    return given


@workspace_router.get(
    "/{workspace_id}/agents",
    response={200: list[AgentOut], **READ},
    summary="List a workspace's agents (any member)",
)
def list_agents(request: HttpRequest, workspace_id: PathId) -> list[Agent]:
    return selectors.list_workspace_agents(get_membership(current_user(request), workspace_id))


@workspace_router.post(
    "/{workspace_id}/agents",
    response={201: AgentOut, **WRITE},
    summary="Create an agent (owners)",
)
def create_agent(request: HttpRequest, workspace_id: PathId, payload: AgentIn) -> Status[Agent]:
    membership = get_membership(current_user(request), workspace_id)
    return Status(201, agent_changes.create_agent(membership=membership, **_given(payload)))


@workspace_router.patch(
    "/{workspace_id}/agents/{agent_id}",
    response={200: AgentOut, **WRITE},
    summary="Change an agent; `is_active: false` disables it (owners)",
)
def update_agent(
    request: HttpRequest, workspace_id: PathId, agent_id: PathId, payload: AgentUpdateIn
) -> Agent:
    membership = get_membership(current_user(request), workspace_id)
    agent = selectors.get_workspace_agent(membership, agent_id)
    return agent_changes.update_agent(membership=membership, agent=agent, **_given(payload))


@workspace_router.post(
    "/{workspace_id}/agents/{agent_id}/disable",
    response={200: AgentOut, **WRITE},
    summary="Switch an agent off: it takes no more turns (owners)",
)
def disable_agent(request: HttpRequest, workspace_id: PathId, agent_id: PathId) -> Agent:
    membership = get_membership(current_user(request), workspace_id)
    agent = selectors.get_workspace_agent(membership, agent_id)
    return agent_changes.update_agent(membership=membership, agent=agent, is_active=False)


@task_router.get(
    "/{task_id}/agents",
    response={200: list[AgentOut], **READ},
    summary="List the agents on a task (any member)",
)
def list_task_agents(request: HttpRequest, task_id: PathId) -> list[Agent]:
    access = get_task_access(current_user(request), task_id)
    return [row.agent for row in selectors.list_task_agents(access.task)]


@task_router.post(
    "/{task_id}/agents",
    response={200: list[AgentOut], **WRITE},
    summary="Put a workspace agent on a task (owners and editors)",
)
def add_task_agent(request: HttpRequest, task_id: PathId, payload: TaskAgentIn) -> list[Agent]:
    access = get_task_access(current_user(request), task_id)
    agent = selectors.get_workspace_agent(access.membership, payload.agent_id)
    agent_services.add_agent_to_task(membership=access.membership, agent=agent, task=access.task)
    return [row.agent for row in selectors.list_task_agents(access.task)]


@task_router.delete(
    "/{task_id}/agents/{agent_id}",
    response={200: list[AgentOut], **WRITE},
    summary="Take an agent off a task (owners and editors)",
)
def remove_task_agent(request: HttpRequest, task_id: PathId, agent_id: PathId) -> list[Agent]:
    access = get_task_access(current_user(request), task_id)
    agent = selectors.get_workspace_agent(access.membership, agent_id)
    agent_services.remove_agent_from_task(
        membership=access.membership, agent=agent, task=access.task
    )
    return [row.agent for row in selectors.list_task_agents(access.task)]


@task_router.post(
    "/{task_id}/agents/{agent_id}/ask",
    response={201: TurnOut, **WRITE},
    summary="Ask an agent to work on the task, as its card's Ask button (owners and editors)",
)
def ask_agent(
    request: HttpRequest, task_id: PathId, agent_id: PathId, payload: AskIn
) -> Status[dict[str, Any]]:
    """The turn it starts (queued); follow it with `GET /api/tasks/{id}/turns/{turn_id}`. 400
    when the agent is switched off or has no Ask button."""
    access = get_task_access(current_user(request), task_id)
    agent = selectors.get_workspace_agent(access.membership, agent_id)
    turn = turn_services.ask_agent(
        membership=access.membership, agent=agent, task=access.task, prompt=payload.prompt
    )
    return Status(201, turn_out(turn))
