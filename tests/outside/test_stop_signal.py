"""Stop reaches outside agents (issue 29): a webhook agent is sent a signed ``turn.cancelled``
notice, a pull agent finds it on its next poll, and later activities for the turn are refused
with a 409 that says so. Stopping a turn that has already finished is a ``Conflict`` in the
service, so the page and the API answer the same."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import pytest
from django.contrib.auth.models import User

from agents.engine.claim import claim_turn
from agents.models import Activity, Delivery, Turn, TurnStatus
from agents.outbox import enqueue
from agents.services import outside, webhooks
from agents.services import turns as turn_services
from collab.lib.errors import Conflict
from collab.tasks import services as task_services
from collab.tasks.models import Task
from collab.workspaces.models import Workspace
from tests import factories
from tests.outside.conftest import post_activity, program_client

pytestmark = pytest.mark.django_db


class _Receiver(BaseHTTPRequestHandler):
    received: list[tuple[dict[str, str], bytes]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        _Receiver.received.append((dict(self.headers), body))
        self.send_response(204)
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


def _running(workspace: Workspace, bob: User, task: Task, name: str) -> Turn:
    member = factories.membership_of(workspace, bob)
    task_services.post_message(membership=member, task=task, body=f"@{name} plan it")
    turn = claim_turn(Turn.objects.get(task=task, agent__name=name).pk).turn
    assert turn is not None
    return turn


def test_a_webhook_agent_is_sent_a_signed_stop_and_later_activities_are_refused(
    receiver: str,
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # given a webhook agent whose program acknowledged its turn
    hooked = outside.create_outside_agent(
        membership=factories.membership_of(workspace, alice), name="Hooked", webhook_url=receiver
    )
    turn = _running(workspace, bob, task, "Hooked")
    delivery = outside.open_delivery(turn=turn, payload={"type": "turn.requested"})
    assert outside.send_webhook(delivery_id=delivery.pk).done
    sent: list[tuple[str, tuple[Any, ...]]] = []
    monkeypatch.setattr(enqueue, "send_job", lambda name, *args, **kw: sent.append((name, args)))

    # when bob presses Stop
    with django_capture_on_commit_callbacks(execute=True):
        turn_services.cancel_turn(membership=factories.membership_of(workspace, bob), turn=turn)

    # then the stop notice is enqueued on commit, and sending it posts a signed notice once
    assert (enqueue.DELIVER_STOP, (delivery.pk,)) in sent
    assert outside.send_stop(delivery_id=delivery.pk).done
    assert outside.send_stop(delivery_id=delivery.pk).done  # a redelivered job sends nothing
    headers, body = _Receiver.received[-1]
    assert len(_Receiver.received) == 2  # the turn, then its stop
    assert webhooks.verify([hooked.secret], headers=headers, body=body) == delivery.stop_id
    notice = json.loads(body)
    assert notice["type"] == "turn.cancelled"
    assert notice["turn"] == {"id": turn.pk, "requested_webhook_id": delivery.webhook_id}
    assert notice["reason"] == "Stopped by bob."
    # and the program's later activity is refused with a 409 that says why
    late = post_activity(program_client(hooked.token), turn.pk, "late", type="reply", text="Hi")
    assert late.status_code == 409
    assert late.json()["detail"] == "The turn was stopped (Stopped by bob.); obey the Stop."
    assert Activity.objects.get(activity_id="late").status == Activity.Status.REFUSED


def test_a_turn_never_sent_to_its_program_sends_no_stop(
    receiver: str,
    workspace: Workspace,
    alice: User,
    bob: User,
    task: Task,
    django_capture_on_commit_callbacks: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    outside.create_outside_agent(
        membership=factories.membership_of(workspace, alice), name="Hooked", webhook_url=receiver
    )
    turn = _running(workspace, bob, task, "Hooked")
    outside.open_delivery(turn=turn, payload={"type": "turn.requested"})  # not tried yet
    sent: list[str] = []
    monkeypatch.setattr(enqueue, "send_job", lambda name, *args, **kw: sent.append(name))

    with django_capture_on_commit_callbacks(execute=True):
        turn_services.cancel_turn(membership=factories.membership_of(workspace, bob), turn=turn)

    assert enqueue.DELIVER_STOP not in sent


def test_a_pull_agent_sees_the_stop_on_its_next_poll_once(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    # given a pull agent that took its turn
    turn = _running(workspace, bob, task, "Scout")
    delivery = outside.open_delivery(turn=turn, payload={"type": "turn.requested", "turn": {}})
    client = program_client(scout.token)
    assert len(client.get("/api/outside/turns?wait=0").json()["turns"]) == 1

    # when bob stops it
    turn_services.cancel_turn(membership=factories.membership_of(workspace, bob), turn=turn)

    # then the next poll answers the stop notice, and the one after nothing
    polled = client.get("/api/outside/turns?wait=0").json()["turns"]
    assert [(t["type"], t["turn"]["id"], t["webhook_id"]) for t in polled] == [
        ("turn.cancelled", turn.pk, delivery.stop_id)
    ]
    assert client.get("/api/outside/turns?wait=0").json()["turns"] == []


def test_stopping_a_finished_turn_is_a_conflict_in_the_service(
    scout: outside.NewOutsideAgent, workspace: Workspace, bob: User, task: Task
) -> None:
    # given a turn that finished just before the Stop arrived (the page still showed it running)
    turn = _running(workspace, bob, task, "Scout")
    Turn.objects.filter(pk=turn.pk).update(status=TurnStatus.DONE)

    # then the service refuses, for the page and the API alike, and changes nothing
    with pytest.raises(Conflict, match="already finished"):
        turn_services.cancel_turn(membership=factories.membership_of(workspace, bob), turn=turn)
    turn.refresh_from_db()
    assert turn.status == TurnStatus.DONE
    assert not Delivery.objects.exclude(stop_sent_at=None).exists()
