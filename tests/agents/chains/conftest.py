"""Fixtures of the chain tests: agents on the task answering with scripted fake chat models,
and the queued turns run by calling the engine directly, as the worker would."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agents.engine import runner
from agents.models import Agent, Turn, TurnStatus
from collab.tasks.models import Task
from tests.agents.conftest import SentJob


@pytest.fixture
def on_task(task: Task, make_agent: Callable[..., Agent]) -> Callable[..., Agent]:
    def make(name: str, behaviour: str) -> Agent:
        agent = make_agent(name, behaviour=behaviour)
        agent.tasks.add(task)
        return agent

    return make


@pytest.fixture
def run_queued(
    sent_jobs: list[SentJob], django_capture_on_commit_callbacks: Any
) -> Callable[[], list[str]]:
    """Run the queued turns oldest first, as workers would, until none is left (at most 20);
    returns who took each turn."""

    def run() -> list[str]:
        ran = []
        for _ in range(20):
            turn = Turn.objects.filter(status=TurnStatus.QUEUED).order_by("id").first()
            if turn is None:
                break
            with django_capture_on_commit_callbacks(execute=True):
                runner.run_turn(turn_id=turn.pk)
            ran.append(turn.agent.name)
        return ran

    return run
