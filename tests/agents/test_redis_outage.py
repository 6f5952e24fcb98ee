"""A real worker (``manage.py worker``, supervised, with the periodic sweep) on a private
Redis that is killed and started again: afterwards everything resumes without a person. The
Redis is this test's own (a free port on 127.0.0.1, no persistence); nothing touches a shared
one."""

from __future__ import annotations

import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings

from agents.models import Agent, Trigger, Turn, TurnStatus
from collab.tasks.models import Task
from tests.processes import live_env

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server"),
]

WAIT_SECONDS = 90  # generous: the machine may be busy; nothing asserts on durations


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _start_redis(port: int, log: Path) -> subprocess.Popen[bytes]:
    with log.open("ab") as out:
        process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            return process
        except OSError:
            time.sleep(0.05)
    raise AssertionError("redis-server did not start")


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[tuple[int, Callable[[], None], Callable[[], None]]]:
    """(port, kill, start): this test's Redis, which it may kill and start again."""
    port = _free_port()
    log = tmp_path / "redis.log"
    running = [_start_redis(port, log)]

    def kill() -> None:
        running[0].send_signal(signal.SIGKILL)
        running[0].wait(timeout=10)

    def start() -> None:
        running[0] = _start_redis(port, log)

    yield port, kill, start
    if running[0].poll() is None:
        running[0].send_signal(signal.SIGKILL)
        running[0].wait(timeout=10)


def _wait_until_done(turn: Turn, logs: list[Path]) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while time.monotonic() < deadline:
        if Turn.objects.get(pk=turn.pk).status == TurnStatus.DONE:
            return
        time.sleep(0.2)
    detail = "\n".join(p.read_text(errors="replace")[-4000:] for p in logs if p.exists())
    raise AssertionError(f"turn {turn.pk} never ran: {Turn.objects.get(pk=turn.pk)!r}\n{detail}")


def test_after_redis_restarts_the_worker_runs_the_turn_whose_job_was_lost_meanwhile(
    tmp_path: Path,
    task: Task,
    make_agent: Callable[..., Agent],
    private_redis: tuple[int, Callable[[], None], Callable[[], None]],
) -> None:
    port, kill_redis, start_redis = private_redis
    agent = make_agent("Mira")
    agent.tasks.add(task)
    worker_log = tmp_path / "worker.log"
    with worker_log.open("wb") as out:
        worker = subprocess.Popen(
            [sys.executable, "manage.py", "worker"],
            cwd=settings.BASE_DIR,
            env=live_env(
                REDIS_URL=f"redis://127.0.0.1:{port}/0",
                AGENTS_SWEEP_SECONDS="1",
                AGENTS_STALE_QUEUED_SECONDS="1",
                DATA_DIR=str(tmp_path / "data"),
            ),
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    logs = [worker_log, tmp_path / "redis.log"]
    try:
        # given a worker that runs turns (this one's job was never sent: only the sweep finds it)
        before = Turn.objects.create(agent=agent, task=task, trigger=Trigger.ASK)
        _wait_until_done(before, logs)

        # when Redis dies, a turn is queued meanwhile (its job lost), and Redis comes back
        kill_redis()
        lost = Turn.objects.create(agent=agent, task=task, trigger=Trigger.MESSAGE)
        time.sleep(3)  # the worker sees the broker gone
        start_redis()

        # then the turn runs, and the worker (or its supervisor) is still there
        _wait_until_done(lost, logs)
        assert worker.poll() is None
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(timeout=30)
        except subprocess.TimeoutExpired:
            worker.kill()
