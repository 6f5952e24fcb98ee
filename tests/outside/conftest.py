"""Outside agents (issue 29): an outside agent Scout of alice's workspace, and a fake program
that answers while Scout's turn waits for it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.engine.producers import outside as outside_producer
from agents.models import Delivery
from agents.services import outside
from collab.workspaces.models import Workspace
from tests import factories

Program = Callable[[dict[str, Any]], None]


@pytest.fixture
def scout(workspace: Workspace, alice: User) -> outside.NewOutsideAgent:
    """An outside agent that pulls its turns (no webhook URL), on the default policy's
    opposite: it never asks on its own, so the program decides."""
    return outside.create_outside_agent(
        membership=factories.membership_of(workspace, alice), name="Scout", policy_name="never"
    )


def program_client(token: str) -> Client:
    return Client(headers={"Authorization": f"Bearer {token}"})


def post_activity(client: Client, turn_id: int, activity_id: str, **body: Any) -> Any:
    return client.post(
        f"/api/outside/turns/{turn_id}/activities",
        data=json.dumps(body),
        content_type="application/json",
        headers={"webhook-id": activity_id},
    )


@pytest.fixture(autouse=True)
def _short_budget(settings: Any) -> None:
    """A program that never finishes fails its turn in seconds, not minutes."""
    settings.AGENTS_TURN_TIME_BUDGET_SECONDS = 15


@pytest.fixture
def program(monkeypatch: pytest.MonkeyPatch) -> list[Program]:
    """``program.append(answer)``: while a turn waits for its outside agent, ``answer`` is
    called once with the delivered payload (in place of the producer's first pause), as the
    program would answer it; later pauses do nothing."""
    answers: list[Program] = []

    def pause(seconds: float) -> None:
        if answers:
            delivery = Delivery.objects.order_by("-id").first()
            assert delivery is not None
            answers.pop(0)(json.loads(outside.message_body(delivery)))
        else:
            time.sleep(0.05)  # the program is silent: the turn waits until its budget ends

    monkeypatch.setattr(outside_producer, "pause", pause)
    return answers
