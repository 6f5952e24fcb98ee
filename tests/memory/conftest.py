from __future__ import annotations

import pytest

from agents.memory import queue


@pytest.fixture(autouse=True)
def sent_jobs(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, tuple[object, ...], int | None]]:
    """Memory jobs that would have been sent to the broker: ``(name, args, countdown)``."""
    sent: list[tuple[str, tuple[object, ...], int | None]] = []

    def record(name: str, *args: object, countdown: int | None = None) -> None:
        sent.append((name, args, countdown))

    monkeypatch.setattr(queue, "send", record)
    return sent
