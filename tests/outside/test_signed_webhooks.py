"""Standard Webhooks signatures (the scheme's published vector), webhook delivery with
retries, and the activities endpoint's refusals (issue 29)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from agents.engine.claim import claim_turn
from agents.models import Activity, AgentMode, Delivery, Turn
from agents.services import outside, webhooks
from collab.tasks import services as task_services
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.outside.conftest import post_activity, program_client

# The scheme's published test vector (standard-webhooks, libraries/python/tests).
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_BODY = b'{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def test_signing_matches_the_schemes_published_vector() -> None:
    signed = webhooks.sign(VECTOR_SECRET, msg_id=VECTOR_ID, timestamp=1614265330, body=VECTOR_BODY)
    assert signed == VECTOR_SIGNATURE


def test_a_rotated_secret_verifies_among_several_signatures() -> None:
    old, new = webhooks.new_secret(), webhooks.new_secret()
    now = int(time.time())
    headers = webhooks.signed_headers([old, new], msg_id="m1", timestamp=now, body=b"{}")
    assert len(headers["webhook-signature"].split(" ")) == 2
    assert webhooks.verify([new], headers=headers, body=b"{}") == "m1"
    with pytest.raises(webhooks.SignatureRefused):
        webhooks.verify([webhooks.new_secret()], headers=headers, body=b"{}")


def test_a_stale_timestamp_is_refused() -> None:
    secret = webhooks.new_secret()
    old = int(time.time()) - 6 * 60
    headers = webhooks.signed_headers([secret], msg_id="m1", timestamp=old, body=b"{}")
    with pytest.raises(webhooks.SignatureRefused, match="timestamp"):
        webhooks.verify([secret], headers=headers, body=b"{}")


@pytest.fixture
def running_turn(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> Turn:
    member = factories.membership_of(workspace, bob)
    task_services.post_message(membership=member, task=task, body="@Scout plan it")
    turn = Turn.objects.get(task=task)
    claimed = claim_turn(turn.pk).turn
    assert claimed is not None
    return claimed


def _signed_post(turn_id: int, secret: str, msg_id: str, body: dict[str, Any], **kw: Any) -> Any:
    raw = json.dumps(body).encode()
    ts = kw.get("timestamp", int(time.time()))
    headers = webhooks.signed_headers([secret], msg_id=msg_id, timestamp=ts, body=raw)
    headers.pop("content-type")
    return Client().post(
        f"/api/outside/turns/{turn_id}/activities",
        data=raw,
        content_type="application/json",
        headers=headers,
    )


@pytest.mark.django_db
def test_a_signed_activity_is_accepted_and_its_replay_refused(
    scout: outside.NewOutsideAgent, running_turn: Turn
) -> None:
    body = {"type": "note", "text": "Looked at the budget."}
    assert _signed_post(running_turn.pk, scout.secret, "n1", body).status_code == 202
    replay = _signed_post(running_turn.pk, scout.secret, "n1", body)
    assert replay.status_code == 409
    assert Activity.objects.filter(status=Activity.Status.ACCEPTED).count() == 1


@pytest.mark.django_db
def test_bad_signature_and_stale_timestamp_are_refused_and_nothing_kept(
    scout: outside.NewOutsideAgent, running_turn: Turn
) -> None:
    body = {"type": "note", "text": "hi"}
    wrong = _signed_post(running_turn.pk, webhooks.new_secret(), "x1", body)
    stale = _signed_post(
        running_turn.pk, scout.secret, "x2", body, timestamp=int(time.time()) - 600
    )
    assert (wrong.status_code, stale.status_code) == (401, 401)
    assert not Activity.objects.exists()


@pytest.mark.django_db
def test_nonsense_forbidden_actions_and_other_agents_turns_are_refused(
    scout: outside.NewOutsideAgent, running_turn: Turn, workspace: Workspace, alice: User
) -> None:
    client = program_client(scout.token)
    unknown = post_activity(client, running_turn.pk, "b1", type="launch", text="x")
    empty = post_activity(client, running_turn.pk, "b2", type="reply", text="  ")
    assert (unknown.status_code, empty.status_code) == (400, 400)
    assert "text" in empty.json()["errors"]
    assert scout.agent.mode == AgentMode.SUGGEST_ONLY
    edit = post_activity(client, running_turn.pk, "b3", type="edit", replace="# Plan")
    assert edit.status_code == 403
    other = outside.create_outside_agent(
        membership=factories.membership_of(workspace, alice), name="Other"
    )
    assert (
        post_activity(program_client(other.token), running_turn.pk, "b4", type="finish").status_code
        == 404
    )
    assert Activity.objects.filter(status=Activity.Status.REFUSED).count() == 3


@pytest.mark.django_db
def test_a_pull_returns_the_pending_turn_once(
    scout: outside.NewOutsideAgent, running_turn: Turn
) -> None:
    outside.open_delivery(turn=running_turn, payload={"type": "turn.requested", "turn": {}})
    client = program_client(scout.token)
    first = client.get("/api/outside/turns?wait=0").json()["turns"]
    again = client.get("/api/outside/turns?wait=0").json()["turns"]
    assert [t["webhook_id"] for t in first] == [Delivery.objects.get().webhook_id]
    assert again == []


class _Receiver(BaseHTTPRequestHandler):
    status = 200
    received: list[tuple[dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        _Receiver.received.append((dict(self.headers), body))
        self.send_response(_Receiver.status)
        self.end_headers()

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[str]:
    _Receiver.received = []
    server = HTTPServer(("127.0.0.1", 0), _Receiver)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/hook"
    server.shutdown()
    server.server_close()


@pytest.mark.django_db
def test_a_webhook_is_signed_retried_with_backoff_then_given_up(
    receiver: str, workspace: Workspace, alice: User, bob: User, task: Task
) -> None:
    hooked = outside.create_outside_agent(
        membership=factories.membership_of(workspace, alice), name="Hooked", webhook_url=receiver
    )
    member = factories.membership_of(workspace, bob)
    task_services.post_message(membership=member, task=task, body="@Hooked go")
    turn = claim_turn(Turn.objects.get(task=task).pk).turn
    assert turn is not None
    delivery = outside.open_delivery(turn=turn, payload={"type": "turn.requested"})

    _Receiver.status = 503
    tries = [outside.send_webhook(delivery_id=delivery.pk, tries=n) for n in range(5)]
    assert [t.done for t in tries] == [False, False, False, False, True]
    assert all(0 <= t.retry_in <= 2**n for n, t in enumerate(tries[:4]))
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.FAILED
    headers, body = _Receiver.received[0]
    assert webhooks.verify([hooked.secret], headers=headers, body=body) == delivery.webhook_id
    assert {h["webhook-id"] for h, _ in _Receiver.received} == {delivery.webhook_id}


@pytest.mark.django_db
def test_an_acknowledged_webhook_is_delivered(
    receiver: str, workspace: Workspace, alice: User, bob: User, task: Task
) -> None:
    outside.create_outside_agent(
        membership=factories.membership_of(workspace, alice), name="Hooked", webhook_url=receiver
    )
    member = factories.membership_of(workspace, bob)
    task_services.post_message(membership=member, task=task, body="@Hooked go")
    turn = claim_turn(Turn.objects.get(task=task).pk).turn
    assert turn is not None
    delivery = outside.open_delivery(turn=turn, payload={"type": "turn.requested"})
    _Receiver.status = 200
    assert outside.send_webhook(delivery_id=delivery.pk).done
    delivery.refresh_from_db()
    assert delivery.status == Delivery.Status.DELIVERED
