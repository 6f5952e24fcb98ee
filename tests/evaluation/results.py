"""Episode results built by hand for the metric tests."""

from __future__ import annotations

from typing import Any

from agents.evaluation.results import EpisodeResult


def ep(name: str = "e", **fields: Any) -> EpisodeResult:
    """An episode result with neutral defaults (a clear request of one session), ``fields`` over
    them."""
    base = {
        "policy": "p",
        "seed": 0,
        "memory": False,
        "episode": name,
        "user": "u",
        "session": 1,
        "template": "travel_plan",
        "needs_clarification": False,
        "blockers": [],
    }
    return EpisodeResult(**{**base, **fields})
