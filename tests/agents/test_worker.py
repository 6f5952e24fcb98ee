"""Production mode with a real Celery worker process on Redis (no eager mode).

A message mentioning an agent is posted here; the turn runs in the worker; its streamed reply
reaches this process's sockets through the Redis channel layer. A worker killed in the middle
of a turn's actions is replaced, the job is delivered again (acks_late), and no action is
applied twice.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import User

from agents.models import Action, Agent, AgentNote, ModelProfile, Provider, Suggestion, Turn
from agents.services import agents as agent_services
from collab.celery import app
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.processes import live_env, worker_command
from tests.realtime.conftest import OpenSocket, open_socket  # noqa: F401  (fixture)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.redis,
    pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL (production mode)"),
]

WAIT_SECONDS = 90  # generous: the machine may be busy; nothing asserts on durations

StartWorker = Callable[..., subprocess.Popen[bytes]]


@pytest.fixture
def start_worker(tmp_path: Path) -> Iterator[StartWorker]:
    """``start_worker(**env)``: a ``celery worker`` process on the test database and Redis."""
    app.control.purge()  # jobs left in the shared queue by other tests are not ours
    workers: list[subprocess.Popen[bytes]] = []

    def start(**extra_env: str) -> subprocess.Popen[bytes]:
        log = (tmp_path / f"worker-{len(workers)}.log").open("wb")
        process = subprocess.Popen(
            # the configured pool, as in production (CELERY_WORKER_POOL)
            worker_command("agents-test", "--loglevel=INFO"),
            cwd=settings.BASE_DIR,
            env=live_env(**extra_env),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        workers.append(process)
        return process

    yield start
    for process in workers:
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=10)
    app.control.purge()


def _wait_for(condition: Callable[[], bool], what: str, logs: Path | None = None) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.1)
    detail = ""
    if logs is not None:
        detail = "\n".join(p.read_text()[-3000:] for p in sorted(logs.glob("worker-*.log")))
    raise AssertionError(f"timed out waiting for {what}\n{detail}")


def _agent(workspace: Workspace, alice: User, task: Task, name: str, behaviour: str) -> Agent:
    profile = ModelProfile.objects.create(name=name, provider=Provider.FAKE, model=behaviour)
    agent = agent_services.create_agent(
        membership=factories.membership_of(workspace, alice), name=name, model_profile=profile
    )
    agent.tasks.add(task)
    return agent


def _post(workspace: Workspace, user: User, task: Task, body: str) -> Message:
    member = factories.membership_of(workspace, user)
    return task_services.post_message(membership=member, task=task, body=body).message


async def test_worker_runs_a_mentioned_agent_and_its_reply_streams_to_open_sockets(
    open_socket: OpenSocket,  # noqa: F811
    start_worker: StartWorker,
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    tmp_path: Path,
) -> None:
    await database_sync_to_async(_agent)(workspace, alice, task, "Mira", "echo@20")
    socket = await open_socket(alice, task.pk, fmt="json")
    start_worker()

    await database_sync_to_async(_post)(workspace, bob, task, "@Mira plan the offsite")

    events: list[dict[str, Any]] = []
    while not any(e.get("type") == "chat.message" and e.get("author") == "Mira" for e in events):
        events.append(await socket.receive_json_from(timeout=WAIT_SECONDS))
    streamed = [e["text"] for e in events if e.get("type") == "agent.stream"]
    assert len(streamed) >= 2
    assert streamed[-1] == "Noted: @Mira plan the offsite"
    statuses = [e["status"] for e in events if e.get("type") == "agent.turn"]
    assert "running" in statuses
    turn = await database_sync_to_async(Turn.objects.get)()
    assert turn.status in ("running", "done")  # the final status event may still be on its way


def test_killing_the_worker_mid_turn_applies_no_action_twice(
    start_worker: StartWorker,
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    tmp_path: Path,
) -> None:
    # given a turn of three actions, with a pause between actions, and quick redelivery
    _agent(workspace, alice, task, "Busy", "everything")
    fault = {
        "AGENTS_FAULT_ACTION_DELAY_MS": "3000",
        "AGENTS_TURN_LEASE_SECONDS": "2",
        "CELERY_VISIBILITY_TIMEOUT": "3",
    }
    first = start_worker(**fault)
    _post(workspace, bob, task, "@Busy summarise please")
    turn = Turn.objects.get()

    def applied() -> int:
        return Action.objects.filter(turn=turn, status=Action.Status.APPLIED).count()

    # when the worker is killed after the reply and the note (applied with the decision) and
    # before the suggestion (applied on its own, after the pause)
    _wait_for(lambda: applied() >= 1, "the first action", tmp_path)
    first.send_signal(signal.SIGKILL)
    first.wait(timeout=10)
    assert applied() < 3

    # then a new worker gets the job again and finishes the turn
    start_worker(**fault)
    _wait_for(lambda: Turn.objects.get(pk=turn.pk).status == "done", "the turn to finish", tmp_path)

    turn.refresh_from_db()
    assert turn.attempts == 2
    assert applied() == 3
    assert list(task.messages.filter(kind=Message.Kind.AGENT).values_list("body", flat=True)) == [
        "Working on it."
    ]
    assert AgentNote.objects.filter(task=task).count() == 1
    assert Suggestion.objects.filter(task=task).count() == 1
    assert turn.model_calls.count() == 1


def test_one_worker_process_runs_turns_of_different_tasks_at_once_but_one_per_agent_and_task(
    start_worker: StartWorker,
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    tmp_path: Path,
) -> None:
    # given an agent whose model pauses half a second between chunks, on two tasks
    agent = _agent(workspace, alice, task, "Slow", "echo@500")
    other = task_services.create_task(
        membership=factories.membership_of(workspace, alice), title="Other"
    )
    agent.tasks.add(other)
    start_worker()  # one process, the production pool (threads)

    # when a turn runs on one task, and meanwhile another is asked for there and one elsewhere
    # (asked for while the first waits in the queue, they would share its turn)
    _post(workspace, bob, task, "@Slow first")
    # (streaming: its context, and so the message it answers, is read by then)
    streaming = Turn.objects.filter(status="running", first_token_at__isnull=False)
    _wait_for(streaming.exists, "the first turn to stream", tmp_path)
    _post(workspace, bob, task, "@Slow second")
    _post(workspace, bob, other, "@Slow elsewhere")
    _wait_for(lambda: Turn.objects.filter(status="done").count() == 3, "the three turns", tmp_path)

    # then the other task's turn ran while the first task's first turn did
    first, second = Turn.objects.filter(task=task).order_by("id")
    elsewhere = Turn.objects.get(task=other)
    assert elsewhere.started_at < first.finished_at
    assert first.started_at < elsewhere.finished_at
    # ... and the first task's second turn only started once its first one had finished
    assert second.started_at >= first.finished_at
    replies = list(task.messages.filter(kind=Message.Kind.AGENT).order_by("id"))
    assert len(replies) == 2
    assert replies[0].body == "Noted: @Slow first"
    assert other.messages.get(kind=Message.Kind.AGENT).body == "Noted: @Slow elsewhere"
