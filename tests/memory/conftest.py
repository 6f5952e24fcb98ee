from __future__ import annotations

import pytest

from agents.memory import jobs


@pytest.fixture(autouse=True)
def enqueued(monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int | None]]:
    """Reflection jobs that would have been sent to the broker: ``(task_id, countdown)``."""
    sent: list[tuple[int, int | None]] = []

    def record(task_id: int, *, countdown: int | None = None) -> None:
        sent.append((task_id, countdown))

    monkeypatch.setattr(jobs, "schedule_reflection", record)
    return sent
