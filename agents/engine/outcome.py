"""What running a turn came to: a closed set of outcomes, for the job's result, logs and tests."""

from __future__ import annotations

from enum import StrEnum

from agents.models import TurnStatus


class Outcome(StrEnum):
    """The value of ``run_turn``. A ``StrEnum``: it is its own JSON (the job's result) and
    compares equal to the turn statuses it shares a value with."""

    # This delivery ran the turn to its end.
    DONE = TurnStatus.DONE.value
    WAITING = TurnStatus.WAITING.value  # asked a question; resumes with a new turn
    CANCELLED = TurnStatus.CANCELLED.value  # stopped (or taken over) while it ran
    FAILED = TurnStatus.FAILED.value
    OVER_BUDGET = "over budget"  # the workspace's monthly hard stop; the turn is failed
    # This delivery did not run it.
    MISSING = "missing"
    ALREADY_ENDED = "already ended"  # an earlier delivery finished it (or it was stopped)
    RUNNING_ELSEWHERE = "running elsewhere"  # another worker holds a live lease
    BLOCKED = "blocked"  # another turn of the agent runs on the task; that one wakes this
    AGENT_INACTIVE = "agent inactive"  # the agent was switched off: the turn is cancelled

    @classmethod
    def of_status(cls, status: str | None) -> Outcome:
        """The outcome for a turn found in ``status`` once this delivery is over."""
        if status in (TurnStatus.DONE, TurnStatus.WAITING, TurnStatus.CANCELLED, TurnStatus.FAILED):
            return cls(status)
        return cls.MISSING if status is None else cls.ALREADY_ENDED
