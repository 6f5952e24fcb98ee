"""The reference client in docs/ (standard library only) runs as a real process against a
real Collab server (``manage.py serve``, as `make run` starts it) and answers a mention."""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.conf import settings

from agents.models import Turn, TurnStatus
from agents.services import outside
from collab.accounts.services import create_api_token
from collab.tasks.models import Message, Task
from tests import factories
from tests.agents.openai_server import free_port
from tests.browser.conftest import LiveServer
from tests.processes import live_env, worker_command

CLIENT = Path(settings.BASE_DIR) / "docs" / "outside_agent_client.py"


@pytest.fixture
def collab(transactional_db: None, monkeypatch: pytest.MonkeyPatch) -> Iterator[LiveServer]:
    """A server of this test's own, whose SITE_URL (the turns' ``activities_url``) is itself."""
    server = LiveServer()
    monkeypatch.setenv("SITE_URL", server.url)  # the server process inherits it
    monkeypatch.setenv("AGENTS_TURN_TIME_BUDGET_SECONDS", "30")  # a silent program: 30 s
    server.start()
    worker = None
    if settings.REDIS_URL:  # production mode runs turns in a worker of their own
        worker = subprocess.Popen(
            worker_command("reference", "--pool=solo", "--loglevel=WARNING"),
            cwd=settings.BASE_DIR,
            env=live_env(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    try:
        yield server
    finally:
        if worker is not None:
            worker.send_signal(signal.SIGTERM)
            try:
                worker.wait(timeout=15)
            except subprocess.TimeoutExpired:
                worker.kill()
        server.stop()


def _wait_for_port(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(100):
        assert process.poll() is None, process.communicate()[1]
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
            return
        time.sleep(0.1)


def _wait_for_reply(task: Task) -> None:
    """Until the server applied the finished turn's actions (or gave up: then it fails)."""
    for _ in range(600):
        turn = Turn.objects.filter(task=task).first()
        if turn is not None and turn.status in (TurnStatus.DONE, TurnStatus.FAILED):
            assert turn.status == TurnStatus.DONE, turn.error
            return
        time.sleep(0.1)
    pytest.fail("the turn did not end within a minute")


@pytest.mark.parametrize("mode", ["pull", "webhook"])
def test_the_reference_client_answers_a_mention(collab: LiveServer, mode: str) -> None:
    # given a workspace with an outside agent, and the client running with its token
    port = free_port()
    hook = f"http://127.0.0.1:{port}/collab" if mode == "webhook" else ""
    alice, bob = factories.make_user("alice"), factories.make_user("bob")
    workspace = factories.make_workspace(alice)
    factories.add_member(workspace, bob, "editor")
    task = factories.make_task(workspace)
    made = outside.create_outside_agent(
        membership=factories.membership_of(workspace, alice),
        name="Scout",
        policy_name="never",
        webhook_url=hook,
    )
    command = [sys.executable, str(CLIENT), mode, "--server", collab.url, "--token", made.token]
    if mode == "webhook":
        command += ["--port", str(port), "--secret", made.secret]
        client = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _wait_for_port(port, client)
    else:
        command += ["--once"]
        client = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # when bob mentions the agent through the API of the live server
        request = urllib.request.Request(  # noqa: S310
            f"{collab.url}/api/tasks/{task.pk}/messages",
            data=json.dumps({"body": "@Scout how long is the offsite?"}).encode(),
            headers={
                "Authorization": f"Bearer {create_api_token(user=bob, name='t').token}",
                "Content-Type": "application/json",
            },
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=30) as answer:  # noqa: S310
            assert answer.status == 201
        # then the client takes the turn, replies and finishes (a pulling one then exits)
        if mode == "pull":
            _out, err = client.communicate(timeout=90)
            assert client.returncode == 0, err
        _wait_for_reply(task)
    finally:
        if client.poll() is None:  # the webhook client serves until it is stopped
            client.kill()
        client.communicate()  # and its pipes are closed
    agent_lines = Message.objects.filter(task=task, kind=Message.Kind.AGENT)
    assert list(agent_lines.values_list("body", flat=True)) == [
        "Reference client here: you asked '@Scout how long is the offsite?'."
    ]
