"""A script holding only API tokens does everything the browser journey does (issue 29): the
script (tests/api/token_journey.py, standard library only) runs as its own process against a
live ``manage.py serve`` this test starts on the test database, with a worker in production
mode. What it did is then read back from the database, so a script that skipped a step fails.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from agents.models import Action, Agent, Feedback, ModelProfile, Question, Suggestion
from collab.accounts.services import create_api_token
from collab.tasks.models import Task
from collab.workspaces.models import Membership
from tests.browser.conftest import LiveServer
from tests.processes import live_env, worker_command

pytestmark = [pytest.mark.timeout(600)]

SCRIPT = Path(__file__).with_name("token_journey.py")


@pytest.fixture
def live_server_url(transactional_db: None) -> Iterator[str]:
    server = LiveServer()
    server.start()
    worker = None
    if settings.REDIS_URL:  # production mode: turns run in a worker of their own
        worker = subprocess.Popen(
            worker_command("journey", "--pool=solo", "--loglevel=WARNING"),
            cwd=settings.BASE_DIR,
            env=live_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    try:
        yield server.url
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGTERM)
            worker.wait(timeout=30)
        server.stop()


def _token(user: User) -> str:
    return create_api_token(user=user, name="journey script").token


def test_a_script_with_only_api_tokens_does_the_whole_journey(live_server_url: str) -> None:
    # given four people with a token each (signing up is a page's job), and the test models
    # a site administrator added
    people = {
        name: User.objects.create_user(name, password="x" * 20)
        for name in ("alice", "bob", "carol")
    }
    people["root"] = User.objects.create_superuser("root", "root@example.org", "x" * 20)
    for behaviour in ("suggest", "edit", "ask"):
        ModelProfile.objects.create(name=f"Model {behaviour}", provider="fake", model=behaviour)
    env = dict(
        live_env(), **{f"{name.upper()}_TOKEN": _token(user) for name, user in people.items()}
    )

    # when the script runs
    run = subprocess.run(
        [sys.executable, str(SCRIPT), live_server_url],
        env=env,
        capture_output=True,
        text=True,
        timeout=540,
    )

    # then it went through every step
    assert run.returncode == 0, run.stdout + run.stderr
    made = json.loads(run.stdout.strip().splitlines()[-1])
    task = Task.objects.get(pk=made["task"])
    assert task.workspace_id == made["workspace"]
    assert task.status == "in_progress"
    roles = dict(
        Membership.objects.filter(workspace=task.workspace).values_list("user__username", "role")
    )
    assert roles == {"alice": "owner", "carol": "viewer"}  # bob was demoted, then removed
    assert set(
        Agent.objects.filter(pk__in=made["agents"].values()).values_list("name", flat=True)
    ) == {
        "Sage",
        "Eddie",
        "Quinn",
    }
    suggestion = Suggestion.objects.get(task=task)
    assert suggestion.status == "edited"
    assert suggestion.final_text.endswith(" (Ana)")
    edit = Action.objects.get(turn__task=task, kind="edit")
    assert edit.result["undone_by"] == "alice"
    question = Question.objects.get(pk=made["question"])
    assert (question.status, question.answer) == ("answered", "The venue first")
    feedback = Feedback.objects.get(task=task, target_kind="question")
    assert (feedback.rating, feedback.comment) == ("up", "Good start")
    assert "café ☕ 日本" in task.document.text
    steps = [line for line in run.stdout.splitlines() if line.startswith("- ")]
    assert len(steps) == 11, run.stdout
