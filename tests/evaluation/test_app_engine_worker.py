"""The app engine in production mode: the run's agent turns go through Redis to a separate
``celery worker`` process on the test database (no in-process worker, no eager mode)."""

from __future__ import annotations

import pytest
from django.conf import settings

from agents.evaluation.app_engine import run_app
from agents.evaluation.metrics import summarise
from agents.evaluation.runner import RunConfig
from agents.models import Feedback, ModelProfile, Provider, Turn
from tests.agents.test_worker import StartWorker, start_worker  # noqa: F401  (fixture)
from tests.evaluation.test_app_engine import tiny_set

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.redis,
    pytest.mark.timeout(600),
    pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL (production mode)"),
]


def test_an_app_engine_run_is_played_by_a_separate_worker_process(
    start_worker: StartWorker,  # noqa: F811
) -> None:
    # given the scribe model and a worker process on Redis
    ModelProfile.objects.create(name="scribe", provider=Provider.FAKE, model="eval_scribe")
    worker = start_worker()
    scenarios = tiny_set({"ana", "ben"}, sessions=1)
    # when the harness plays one session of two people
    # (the default policy reads the detectors, no model signal: oracle mode needs one process)
    run = run_app(
        scenarios, RunConfig(policies=["ask_when_blocked"], memory=(True,), model="scribe")
    )
    # then every episode was played through turns the worker ran to an end
    assert worker.poll() is None
    assert {r.episode for r in run.results} == {"ana-s1-travel_plan", "ben-s1-travel_plan"}
    turns = Turn.objects.all()
    assert turns.exists()
    assert all(turn.status in ("done", "waiting") for turn in turns)
    assert all(turn.started_at is not None for turn in turns)
    by_id = {r.episode: r for r in run.results}
    assert by_id["ben-s1-travel_plan"].asked is True
    assert by_id["ana-s1-travel_plan"].asked is False
    assert summarise(run.results)["cross_user_leakage"] == 0
    # and each person's feedback on the agent's moves went through record_feedback
    assert Feedback.objects.count() == summarise(run.results)["feedback_given"] > 0
