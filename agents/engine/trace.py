"""A turn's trace: each stage this delivery ran, with its duration and a short summary of what
it returned, so the turn's review page shows where its time and decisions went."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

SUMMARY_CHARS = 200


@dataclass
class Trace:
    """The stages of one delivery of a turn, in the order they ran (``attempt``: its number)."""

    attempt: int = 0
    stages: list[dict[str, Any]] = field(default_factory=list)

    def run(self, stage: str, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """``function(*args, **kwargs)``, recorded as ``stage``: its duration, and its result's
        ``summary()`` when it has one."""
        started = time.monotonic()
        result = function(*args, **kwargs)
        summarise = getattr(result, "summary", None)
        self.add(stage, started, summarise() if callable(summarise) else _summary_of(result))
        return result

    def add(self, stage: str, started: float, summary: str) -> None:
        self.stages.append(
            {
                "stage": stage,
                "ms": round((time.monotonic() - started) * 1000, 1),
                "summary": summary[:SUMMARY_CHARS],
                "attempt": self.attempt,
            }
        )

    def to_stored(self, earlier: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
        """The turn's stored trace: an earlier delivery's stages, then this one's."""
        return [*(earlier or []), *self.stages]


def _summary_of(result: Any) -> str:
    if result is None:
        return ""
    if isinstance(result, list):
        return f"{len(result)} pending actions"
    return str(result)
