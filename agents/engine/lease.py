"""A running turn's lease and its one wall-clock budget: what every stage that waits (claim,
the model signals, streaming, storing the decision) reads, so none of them reaches back into
``claim`` for it."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from agents.models import Turn


def lease_seconds() -> int:
    return settings.AGENTS_TURN_LEASE_SECONDS


def time_budget_seconds() -> int:
    return settings.AGENTS_TURN_TIME_BUDGET_SECONDS


def seconds_left(turn: Turn) -> float:
    """What is left of the turn's one wall-clock budget, counted from its first start: retries,
    signal calls and every attempt's streaming share it."""
    if turn.started_at is None:
        return float(time_budget_seconds())
    return time_budget_seconds() - (timezone.now() - turn.started_at).total_seconds()


def out_of_time_message() -> str:
    return (
        f"Stopped for time: the turn used its whole {time_budget_seconds()} s budget "
        "(AGENTS_TURN_TIME_BUDGET_SECONDS), retries included."
    )


def lease_expiry() -> datetime:
    return timezone.now() + timedelta(seconds=lease_seconds())
