"""``manage.py worker``: a supervised Celery worker (restarted when it exits)."""

from __future__ import annotations

from typing import Any

import pytest
from django.core.management import call_command

from collab.core.management.commands import worker


class ExitingWorker:
    """A ``celery worker`` child that dies at once (as on an unrecoverable error)."""

    started: list[list[str]] = []

    def __init__(self, command: list[str]) -> None:
        ExitingWorker.started.append(command)

    def wait(self) -> int:
        return 1

    def poll(self) -> int:
        return 1


def test_a_worker_that_exits_is_started_again_after_a_growing_bounded_pause(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pauses: list[float] = []
    ExitingWorker.started = []
    monkeypatch.setattr(worker.subprocess, "Popen", ExitingWorker)
    monkeypatch.setattr(worker.time, "sleep", pauses.append)

    with pytest.raises(SystemExit) as exited:
        call_command("worker", "--max-restarts=6")

    assert exited.value.code == 1
    assert len(ExitingWorker.started) == 7  # the first start and six restarts
    assert pauses == [1, 2, 4, 8, 16, 30]


def test_the_worker_runs_without_the_chatter_that_fails_on_a_redis_restart_and_with_beat(
    settings: Any,
) -> None:
    command = worker.celery_command(beat=True, extra=[])

    assert {"--without-heartbeat", "--without-mingle", "--without-gossip", "--beat"} <= set(command)
    assert "--beat" not in worker.celery_command(beat=False, extra=[])
