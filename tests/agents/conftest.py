from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.models import Agent, ModelProfile, Provider
from agents.outbox import enqueue
from agents.services import agents as agent_services
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories


@dataclass(frozen=True)
class SentJob:
    name: str
    args: tuple[Any, ...]
    countdown: float | None


@pytest.fixture
def sent_jobs(monkeypatch: pytest.MonkeyPatch) -> list[SentJob]:
    """The jobs sent by name (``agents.outbox.enqueue.send_job``), recorded instead of reaching the
    broker."""
    sent: list[SentJob] = []

    def record(name: str, *args: Any, countdown: float | None = None) -> bool:
        sent.append(SentJob(name, args, countdown))
        return True

    monkeypatch.setattr(enqueue, "send_job", record)
    return sent


@pytest.fixture
def make_profile(db: None) -> Callable[..., ModelProfile]:
    def make(behaviour: str = "echo", **fields: object) -> ModelProfile:
        return ModelProfile.objects.create(
            name=f"fake-{behaviour}-{ModelProfile.objects.count()}",
            provider=Provider.FAKE,
            model=behaviour,
            **fields,
        )

    return make


@pytest.fixture
def make_agent(
    workspace: Workspace, alice: User, make_profile: Callable[..., ModelProfile]
) -> Callable[..., Agent]:
    """``make_agent("Mira", behaviour="suggest", on_every_message=True)``, owned by alice."""

    def make(name: str = "Mira", behaviour: str = "echo", **fields: object) -> Agent:
        owner = factories.membership_of(workspace, alice)
        return agent_services.create_agent(
            membership=owner, name=name, model_profile=make_profile(behaviour), **fields
        )

    return make


@pytest.fixture
def mira(make_agent: Callable[..., Agent], task: Task) -> Agent:
    agent = make_agent("Mira")
    agent.tasks.add(task)
    return agent
