"""A turn's trace: each stage this delivery ran, with its duration and a short summary of what
it returned, so the turn's review page shows where its time and decisions went."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, TypeVar

from agents.models import Turn

T = TypeVar("T")

SUMMARY_CHARS = 200


@dataclass
class Trace:
    """The stages of one delivery of a turn, in the order they ran (``attempt``: its number).
    Each ``lap`` records the time since the previous one (or since ``mark``, or the start)."""

    attempt: int = 0
    stages: list[dict[str, Any]] = field(default_factory=list)
    _since: float = field(default_factory=time.monotonic)

    def mark(self) -> None:
        """Start the next stage's clock now (what ran since the last lap is no stage's)."""
        self._since = time.monotonic()

    def lap(self, stage: str, value: T, *, summary: str | None = None) -> T:
        """Record ``stage`` as ending now, with ``summary`` (else ``value``'s ``summary()``, when
        it has one); returns ``value``."""
        now = time.monotonic()
        if summary is None:
            summarise = getattr(value, "summary", None)
            summary = summarise() if callable(summarise) else _summary_of(value)
        self.stages.append(
            {
                "stage": stage,
                "ms": round((now - self._since) * 1000, 1),
                "summary": summary[:SUMMARY_CHARS],
                "attempt": self.attempt,
            }
        )
        self._since = now
        return value

    def save(self, turn: Turn) -> None:
        """Add this delivery's stages to the turn's stored trace, after an earlier delivery's
        (one UPDATE, whatever the turn's status now; a delivery that ran no stage adds none)."""
        if not self.stages:
            return
        earlier = turn.stages if isinstance(turn.stages, list) else []
        turn.stages = [*earlier, *self.stages]
        Turn.objects.filter(pk=turn.pk).update(stages=turn.stages)


def _summary_of(value: Any) -> str:
    return "" if value is None else str(value)
