"""A real supervised worker (``manage.py worker``, with the periodic sweep) on a Redis of this
test's own (``private_redis``: a free port, never the shared one): killed mid-turn with the
default one-hour visibility timeout, and Redis stopped and started mid-turn. Each turn must
finish exactly once: every action applied once, one reply, one note, one suggestion.

The turns are created directly (their job never reaches this Redis), so the sweep is what sends
them, as it does for a turn whose job was lost; nothing here depends on the test session's mode.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from agents.models import (
    Action,
    Agent,
    AgentNote,
    ModelProfile,
    Provider,
    Suggestion,
    Trigger,
    Turn,
    TurnStatus,
)
from agents.services import agents as agent_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.processes import live_env
from tests.reliability.conftest import PrivateRedis

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
    pytest.mark.timeout(240),
]

LEASE_SECONDS = 5
# Generous (a busy machine): what matters is that it is far below the one-hour visibility
# timeout after which Redis alone would deliver the killed worker's job again.
WAIT_SECONDS = 90


@pytest.fixture
def busy_agent(workspace: Workspace, alice: User, task: Task) -> Agent:
    """An agent whose turn applies three actions (reply and note with the decision, then a
    suggestion), with a pause before each action so a test can strike in the middle."""
    profile = ModelProfile.objects.create(name="Busy", provider=Provider.FAKE, model="everything")
    agent = agent_services.create_agent(
        membership=factories.membership_of(workspace, alice), name="Busy", model_profile=profile
    )
    agent.tasks.add(task)
    return agent


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[Callable[[int], subprocess.Popen[bytes]]]:
    """``start_worker(redis_port)``: ``manage.py worker`` (supervisor and celery child in a
    process group of their own, so a test can SIGKILL both) with the default visibility
    timeout, a short lease and a one-second sweep."""
    started: list[subprocess.Popen[bytes]] = []

    def start(port: int) -> subprocess.Popen[bytes]:
        env = live_env(
            REDIS_URL=f"redis://127.0.0.1:{port}/0",
            AGENTS_SWEEP_SECONDS="1",
            AGENTS_STALE_QUEUED_SECONDS="1",
            AGENTS_TURN_LEASE_SECONDS=str(LEASE_SECONDS),
            AGENTS_FAULT_ACTION_DELAY_MS="3000",
            DATA_DIR=str(tmp_path / f"data-{len(started)}"),
        )
        env.pop("CELERY_VISIBILITY_TIMEOUT", None)  # the default: an hour
        log = (tmp_path / f"worker-{len(started)}.log").open("wb")
        process = subprocess.Popen(
            [sys.executable, "manage.py", "worker", "--", "--loglevel=INFO"],
            cwd=settings.BASE_DIR,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        started.append(process)
        return process

    yield start
    for process in started:
        kill_group(process)


def kill_group(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the supervisor and its celery child: no shutdown, no acknowledgement."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def _wait_for(condition: Callable[[], bool], what: str, logs: Path) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    detail = "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(logs.glob("*.log")))
    raise AssertionError(f"timed out waiting for {what}\n{detail}")


def _applied(turn: Turn) -> int:
    return Action.objects.filter(turn=turn, status=Action.Status.APPLIED).count()


def _assert_finished_once(turn: Turn, task: Task) -> None:
    turn.refresh_from_db()
    assert turn.status == TurnStatus.DONE
    assert _applied(turn) == 3
    agent_messages = task.messages.filter(kind=Message.Kind.AGENT).values_list("body", flat=True)
    assert list(agent_messages) == ["Working on it."]
    assert AgentNote.objects.filter(task=task).count() == 1
    assert Suggestion.objects.filter(task=task).count() == 1


def test_a_worker_killed_mid_turn_finishes_the_turn_once_within_the_lease_not_the_hour(
    busy_agent: Agent,
    task: Task,
    private_redis: PrivateRedis,
    start_worker: Callable[[int], subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    first = start_worker(private_redis.port)
    turn = Turn.objects.create(agent=busy_agent, task=task, trigger=Trigger.ASK)

    # when the whole worker is killed after the first actions and before the last
    _wait_for(lambda: _applied(turn) >= 1, "the first action", tmp_path)
    kill_group(first)
    assert _applied(turn) < 3
    killed_at = time.monotonic()

    # then another worker takes the turn over once its lease has run out (the sweep), while
    # Redis still holds the dead worker's unacknowledged job for the rest of the hour
    start_worker(private_redis.port)
    _wait_for(lambda: Turn.objects.get(pk=turn.pk).status == TurnStatus.DONE, "the turn", tmp_path)
    took = time.monotonic() - killed_at
    _assert_finished_once(turn, task)
    turn.refresh_from_db()
    assert turn.attempts == 2
    print(f"finished {took:.1f} s after the kill (lease {LEASE_SECONDS} s)")


def test_redis_stopped_and_started_mid_turn_finishes_the_turn_once(
    busy_agent: Agent,
    task: Task,
    private_redis: PrivateRedis,
    start_worker: Callable[[int], subprocess.Popen[bytes]],
    tmp_path: Path,
) -> None:
    worker = start_worker(private_redis.port)
    turn = Turn.objects.create(agent=busy_agent, task=task, trigger=Trigger.ASK)

    # when Redis stops in the middle of the turn (between its actions) for a few seconds
    _wait_for(lambda: _applied(turn) >= 1, "the first action", tmp_path)
    private_redis.stop()
    time.sleep(4)
    private_redis.start()

    # then the turn finishes, once, and the worker (or its supervisor) is still there
    _wait_for(lambda: Turn.objects.get(pk=turn.pk).status == TurnStatus.DONE, "the turn", tmp_path)
    _assert_finished_once(turn, task)
    assert worker.poll() is None
    # and the next turn runs too (the worker consumes again after the outage)
    Turn.objects.create(agent=busy_agent, task=task, trigger=Trigger.ASK)
    _wait_for(
        lambda: not Turn.objects.exclude(status=TurnStatus.DONE).exists(), "a later turn", tmp_path
    )
