"""Nothing waits for a person after an outage: a post made while the broker is down succeeds
whole, and the periodic sweep sends again what never reached the broker, recovers turns whose
worker died, and expires questions whose time is up (issue #15 item 5, #14 item 10)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils import timezone
from kombu.exceptions import OperationalError

from agents import jobs
from agents.engine import runner
from agents.models import Agent, Question, Trigger, Turn, TurnStatus
from agents.outbox import enqueue
from agents.services import sweep as sweep_services
from agents.services import turns as turn_services
from collab.celery import app
from collab.core import embedded
from collab.tasks import services as task_services
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.agents.conftest import SentJob


@pytest.fixture
def broker_down(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every send to the broker fails as it does while Redis is down; the names tried."""
    tried: list[str] = []

    def refuse(name: str, *args: Any, **kwargs: Any) -> None:
        tried.append(name)
        raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(app, "send_task", refuse)
    return tried


def _age(turn: Turn, seconds: float) -> None:
    Turn.objects.filter(pk=turn.pk).update(created_at=timezone.now() - timedelta(seconds=seconds))


def _asked_ago(question: Question, *, minutes: int) -> None:
    Question.objects.filter(pk=question.pk).update(
        created_at=timezone.now() - timedelta(minutes=minutes)
    )


def _turns_sent(sent: list[SentJob]) -> list[int]:
    return [job.args[0] for job in sent if job.name == enqueue.RUN_TURN]


@pytest.mark.django_db(transaction=True)
def test_a_message_posted_while_the_broker_is_down_is_answered_and_its_turn_stays_queued(
    as_user: Callable[[User], Any],
    workspace: Workspace,
    bob: User,
    task: Task,
    make_agent: Callable[..., Agent],
    broker_down: list[str],
) -> None:
    make_agent("Mira")

    response = as_user(bob).post(
        reverse("tasks:post_message", args=[task.pk]), {"body": "@Mira draft the agenda"}
    )

    assert response.status_code == 302  # committed, so answered as committed (not a 500)
    assert task.messages.get().body == "@Mira draft the agenda"
    assert enqueue.RUN_TURN in broker_down  # tried, refused, logged
    turn = Turn.objects.get()
    assert (turn.status, turn.attempts) == (TurnStatus.QUEUED, 0)


def test_the_sweep_sends_a_stale_queued_turn_again_and_it_then_runs(
    workspace: Workspace,
    bob: User,
    task: Task,
    make_agent: Callable[..., Agent],
    broker_down: list[str],
    django_capture_on_commit_callbacks: Any,
    settings: Any,
) -> None:
    # given a turn whose job was lost while the broker was down
    make_agent("Mira")
    with django_capture_on_commit_callbacks(execute=True):
        task_services.post_message(
            membership=factories.membership_of(workspace, bob), task=task, body="@Mira hi"
        )
    turn = Turn.objects.get()
    settings.AGENTS_STALE_QUEUED_SECONDS = 60
    fresh = sweep_services.sweep()
    _age(turn, 61)
    # when the broker is back and the sweep runs
    sent: list[SentJob] = []
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(enqueue, "send_job", lambda name, *a, **k: sent.append(SentJob(name, a, None)))
        report = sweep_services.sweep()
    # then the turn is sent again (once), and runs when delivered
    assert fresh.requeued == ()  # not yet stale: its job may still be on its way
    assert report.requeued == (turn.pk,)
    assert _turns_sent(sent) == [turn.pk]
    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.DONE


def test_the_sweep_leaves_a_queued_turn_to_its_running_sibling_and_sends_only_the_oldest(
    task: Task, make_agent: Callable[..., Agent], sent_jobs: list[SentJob]
) -> None:
    agent = make_agent("Mira")
    running = Turn.objects.create(
        agent=agent,
        task=task,
        trigger=Trigger.ASK,
        status=TurnStatus.RUNNING,
        lease_expires_at=timezone.now() + timedelta(seconds=30),
    )
    first = Turn.objects.create(agent=agent, task=task, trigger=Trigger.ASK)
    second = Turn.objects.create(agent=agent, task=task, trigger=Trigger.MESSAGE)
    for turn in (first, second):
        _age(turn, 3600)

    assert sweep_services.sweep().requeued == ()  # the running one wakes them when it ends

    Turn.objects.filter(pk=running.pk).update(status=TurnStatus.DONE)
    assert sweep_services.sweep().requeued == (first.pk,)


def test_a_turn_whose_worker_died_is_sent_again_once_its_lease_ran_out(
    task: Task, make_agent: Callable[..., Agent], sent_jobs: list[SentJob]
) -> None:
    # given a turn claimed by a worker that died (its lease is not renewed any more)
    agent = make_agent("Mira")
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    Turn.objects.filter(pk=turn.pk).update(
        status=TurnStatus.RUNNING,
        attempts=1,
        lease_expires_at=timezone.now() + timedelta(seconds=5),
    )
    assert sweep_services.sweep().recovered == ()  # alive as far as anyone can tell
    Turn.objects.filter(pk=turn.pk).update(lease_expires_at=timezone.now() - timedelta(seconds=1))

    report = sweep_services.sweep()

    assert report.recovered == (turn.pk,)
    assert _turns_sent(sent_jobs) == [turn.pk]
    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.DONE  # the delivery takes it over
    assert Turn.objects.get(pk=turn.pk).attempts == 2


def test_a_week_long_question_timeout_gets_no_countdown_and_the_sweep_expires_it_when_due(
    task: Task, make_agent: Callable[..., Agent], sent_jobs: list[SentJob]
) -> None:
    week = 7 * 24 * 60
    agent = make_agent("Curious", behaviour="ask", question_timeout_minutes=week)
    agent.tasks.add(task)
    turn = turn_services.start_turn(agent=agent, task=task, trigger=Trigger.ASK)
    assert runner.run_turn(turn_id=turn.pk) == TurnStatus.WAITING
    question = Question.objects.get(turn=turn)

    assert [j for j in sent_jobs if j.name == enqueue.QUESTION_TIMEOUT] == []
    _asked_ago(question, minutes=week - 1)
    assert sweep_services.sweep().expired == ()

    _asked_ago(question, minutes=week + 1)
    report = sweep_services.sweep()

    assert report.expired == (question.pk,)
    question.refresh_from_db()
    assert question.status == Question.Status.EXPIRED
    assert Turn.objects.filter(trigger=Trigger.TIMEOUT, task=task).count() == 1


def test_the_sweep_job_is_what_beat_sends_and_the_small_jobs_retry_with_a_bounded_backoff(
    settings: Any,
) -> None:
    assert (
        settings.CELERY_BEAT_SCHEDULE["agents-sweep"]["task"]
        == enqueue.SWEEP
        == jobs.sweep_job.name
    )
    for job in (jobs.document_idle_job, jobs.question_timeout_job, jobs.sweep_job):
        assert job.acks_late
        assert OperationalError in job.autoretry_for
        assert (job.max_retries, job.retry_backoff_max) == (5, 60)


def test_the_embedded_timer_sends_the_periodic_jobs_by_name(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sent: list[str] = []
    two = threading.Semaphore(0)

    def record(name: str, **kwargs: Any) -> None:
        sent.append(name)
        two.release()

    monkeypatch.setattr(app, "send_task", record)
    monkeypatch.setitem(
        app.conf, "beat_schedule", {"sweep": {"task": enqueue.SWEEP, "schedule": 0.05}}
    )
    stop = embedded.start_beat_timer()
    try:
        assert two.acquire(timeout=10)
        assert two.acquire(timeout=10)
    finally:
        stop.set()
    assert set(sent) == {enqueue.SWEEP}
