"""One wall-clock budget (AGENTS_TURN_TIME_BUDGET_SECONDS) bounds the whole turn: every
attempt, the retries' waits and the signal calls share it, and the card and the chat say when
a turn was stopped for time."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.utils import timezone

from agents import llm
from agents.engine import runner
from agents.jobs import run_turn_job
from agents.models import Agent, ModelCall, Trigger, Turn, TurnStatus
from agents.services import turns as turn_services
from collab.tasks.models import Message, Task


def _started(turn: Turn, seconds_ago: float) -> None:
    Turn.objects.filter(pk=turn.pk).update(
        started_at=timezone.now() - timedelta(seconds=seconds_ago)
    )


def test_a_retry_that_starts_after_the_budget_is_stopped_for_time(
    task: Task, mira: Agent, sent_jobs: list[Any], settings: Any
) -> None:
    settings.AGENTS_TURN_TIME_BUDGET_SECONDS = 120
    turn = turn_services.start_turn(agent=mira, task=task, trigger=Trigger.ASK)
    _started(turn, 130)  # its first attempt began 130 s ago

    assert runner.run_turn(turn_id=turn.pk) == "failed"

    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED
    assert turn.error.startswith("Stopped for time: the turn used its whole 120 s budget")
    note = Message.objects.get(task=task, kind=Message.Kind.SYSTEM)
    assert "Mira could not finish this turn: Stopped for time" in note.body
    assert not ModelCall.objects.filter(turn=turn).exists()  # no model call once out of time


def test_a_failing_model_is_not_retried_past_the_budget(
    task: Task, make_agent: Callable[..., Agent], sent_jobs: list[Any], settings: Any
) -> None:
    settings.AGENTS_TURN_TIME_BUDGET_SECONDS = 120
    agent = make_agent("Flaky", behaviour="fail")
    agent.tasks.add(task)
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    _started(turn, 118)  # 2 s left: less than the retry's 1 s wait plus a second to run

    assert run_turn_job(turn.pk) == "failed"

    turn.refresh_from_db()
    assert turn.status == TurnStatus.FAILED
    assert "Stopped for time" in turn.error
    assert "Last error: The fake model was told to fail." in turn.error
    assert ModelCall.objects.filter(turn=turn).count() == 1


def test_a_turn_well_inside_its_budget_is_retried(
    task: Task, make_agent: Callable[..., Agent], sent_jobs: list[Any], settings: Any
) -> None:
    settings.AGENTS_TURN_TIME_BUDGET_SECONDS = 120
    agent = make_agent("Flaky", behaviour="fail")
    agent.tasks.add(task)
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)

    # Called directly (not by a worker), Celery's retry re-raises the error after the turn
    # was put back in the queue for it.
    with pytest.raises(llm.ModelError):
        run_turn_job(turn.pk)

    assert Turn.objects.get(pk=turn.pk).status == TurnStatus.QUEUED
