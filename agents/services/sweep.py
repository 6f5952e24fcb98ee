"""The periodic sweep: what a lost job, a dead worker or a long timeout would otherwise leave
waiting for a person. Run every ``AGENTS_SWEEP_SECONDS`` by Celery beat (production) or by the
embedded worker's own timer (``collab.core.embedded``); safe to run anywhere, any number of
times (every job it sends is idempotent).

* A ``queued`` turn older than ``AGENTS_STALE_QUEUED_SECONDS`` whose job may never have reached
  the broker (enqueued on commit while Redis was down) is sent again; only the oldest queued
  turn of an agent on a task, and none while a sibling runs on a live lease (that one wakes it).
* A ``running`` turn whose lease ran out (its worker died) is sent again at once: the next
  delivery takes it over, within the lease plus one sweep, not after the broker's visibility
  timeout (an hour by default).
* An open question whose time is up is expired (its agent resumes on its best guess). Timeouts
  longer than ``AGENTS_COUNTDOWN_MAX_SECONDS`` (up to 7 days) are found only here: a countdown
  beyond the broker's visibility timeout would be redelivered every visibility timeout.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.utils import timezone

from agents.models import Question, Turn, TurnStatus
from agents.services.questions import expire_question
from agents.services.turns import enqueue_turn

log = logging.getLogger(__name__)

BATCH = 500  # rows of each kind looked at per sweep; the next sweep takes the rest


@dataclass(frozen=True)
class SweepReport:
    requeued: tuple[int, ...] = ()  # queued turns sent again
    recovered: tuple[int, ...] = ()  # running turns whose lease ran out, sent again
    expired: tuple[int, ...] = ()  # questions whose time was up

    def as_dict(self) -> dict[str, list[int]]:
        return {
            "requeued": list(self.requeued),
            "recovered": list(self.recovered),
            "expired": list(self.expired),
        }


def stale_queued_turns(now: datetime) -> list[int]:
    """The oldest queued turn of each agent on a task, queued before the stale horizon, whose
    agent runs nothing on that task under a live lease."""
    horizon = now - timedelta(seconds=settings.AGENTS_STALE_QUEUED_SECONDS)
    live = set(
        Turn.objects.filter(status=TurnStatus.RUNNING, lease_expires_at__gt=now).values_list(
            "agent_id", "task_id"
        )
    )
    oldest: dict[tuple[int, int], int] = {}
    rows = (
        Turn.objects.filter(status=TurnStatus.QUEUED, created_at__lt=horizon)
        .order_by("id")
        .values_list("pk", "agent_id", "task_id")[:BATCH]
    )
    for pk, agent_id, task_id in rows:
        if (agent_id, task_id) not in live:
            oldest.setdefault((agent_id, task_id), pk)
    return sorted(oldest.values())


def lapsed_running_turns(now: datetime) -> list[int]:
    """Running turns whose lease ran out: their worker died (or lost the database)."""
    rows = Turn.objects.filter(status=TurnStatus.RUNNING, lease_expires_at__lte=now)
    return list(rows.order_by("id").values_list("pk", flat=True)[:BATCH])


def due_questions(now: datetime) -> list[int]:
    """Open questions whose agent's timeout has passed since they were asked."""
    rows = (
        Question.objects.filter(status=Question.Status.OPEN, agent__question_timeout_minutes__gt=0)
        .order_by("id")
        .values_list("pk", "created_at", "agent__question_timeout_minutes")[:BATCH]
    )
    return [pk for pk, asked, minutes in rows if asked + timedelta(minutes=minutes) <= now]


def sweep(*, now: datetime | None = None) -> SweepReport:
    now = now or timezone.now()
    requeued = stale_queued_turns(now)
    recovered = lapsed_running_turns(now)
    for turn_id in (*requeued, *recovered):
        enqueue_turn(turn_id)  # never raises: a broker still down is the next sweep's
    expired = []
    for question_id in due_questions(now):
        if expire_question(question_id=question_id) is not None:
            expired.append(question_id)
    report = SweepReport(tuple(requeued), tuple(recovered), tuple(expired))
    if requeued or recovered or expired:
        log.info("sweep: %s", report.as_dict())
    return report
