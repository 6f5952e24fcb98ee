"""The task chat WebSocket (/ws/tasks/<id>/chat), spoken to like a browser or an API client."""

from __future__ import annotations

import json
import logging

import pytest
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from collab.asgi import application
from collab.realtime.consumers import CloseCode
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace
from collab.workspaces.services import change_role, remove_member
from tests import factories
from tests.realtime.conftest import WAIT, OpenSocket, _session_cookie

pytestmark = pytest.mark.django_db(transaction=True)


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def _post_over_http(user: User, task: Task, body: str) -> int:
    response = _client(user).post(
        reverse("tasks:post_message", args=[task.pk]), {"body": body}, HTTP_HX_REQUEST="true"
    )
    return response.status_code


def _message_count(task: Task) -> int:
    return Message.objects.filter(task=task).count()


async def test_message_posted_over_http_reaches_another_members_socket_as_json(
    open_socket: OpenSocket, alice: User, bob: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk, fmt="json")

    status = await database_sync_to_async(_post_over_http)(bob, task, "Booked the venue")

    assert status == 200
    event = await socket.receive_event()
    assert event["type"] == "chat.message"
    assert event["author"] == "bob"
    assert event["body"] == "Booked the venue"
    assert event["task_id"] == task.pk


async def test_message_posted_over_http_reaches_another_members_socket_as_html(
    open_socket: OpenSocket, alice: User, bob: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk)

    await database_sync_to_async(_post_over_http)(bob, task, "Booked the **venue**")

    html = await socket.receive_html()
    assert 'id="messages" hx-swap-oob="beforeend"' in html
    assert "<strong>venue</strong>" in html
    assert "bob" in html


async def test_message_sent_as_a_frame_is_saved_and_reaches_every_socket(
    open_socket: OpenSocket, alice: User, bob: User, task: Task
) -> None:
    alices = await open_socket(alice, task.pk, fmt="json")
    bobs = await open_socket(bob, task.pk, fmt="json")

    await bobs.send_json_to({"type": "chat.message", "body": "On my way"})

    for socket in (alices, bobs):
        event = await socket.receive_event()
        assert (event["type"], event["author"], event["body"]) == (
            "chat.message",
            "bob",
            "On my way",
        )
    assert await database_sync_to_async(_message_count)(task) == 1


async def test_a_memory_command_sent_as_a_frame_tells_only_its_sender_what_it_did(
    open_socket: OpenSocket, alice: User, bob: User, task: Task
) -> None:
    alices = await open_socket(alice, task.pk, fmt="json")
    bobs = await open_socket(bob, task.pk, fmt="json")
    bobs_page = await open_socket(bob, task.pk)  # HTML

    await bobs.send_json_to({"type": "chat.message", "body": "remember that I like tea"})

    notice = "Remembered for you, everywhere: “I like tea”."
    events = [await bobs.receive_event(), await bobs.receive_event()]
    assert {"type": "memory.notice", "text": notice} in events
    assert [e["type"] for e in events].count("chat.message") == 1
    assert (await alices.receive_event())["type"] == "chat.message"
    assert await alices.receive_nothing(timeout=0.5)  # not told about bob's memory
    assert 'id="messages"' in await bobs_page.receive_html()
    assert await bobs_page.receive_nothing(
        timeout=0.5
    )  # the notice went to the sending socket only

    await bobs_page.send_json_to({"type": "chat.message", "body": "forget tea"})

    fragments = [await bobs_page.receive_html(), await bobs_page.receive_html()]
    assert any('id="chat-notice"' in f and "Forgot 1 remembered item." in f for f in fragments)


async def test_script_in_a_message_arrives_escaped_in_html(
    open_socket: OpenSocket, alice: User, bob: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk)
    bobs = await open_socket(bob, task.pk, fmt="json")

    await bobs.send_json_to({"type": "chat.message", "body": "<script>alert(1)</script> hi"})

    html = await socket.receive_html()
    assert "<script>" not in html
    assert "hi" in html


async def test_outsider_is_refused_at_the_handshake(
    open_socket: OpenSocket, mallory: User, task: Task
) -> None:
    socket = await open_socket(mallory, task.pk)

    assert not socket.accepted
    assert socket.close_code == CloseCode.NOT_FOUND


async def test_anonymous_visitor_is_refused_at_the_handshake(
    open_socket: OpenSocket, task: Task
) -> None:
    socket = await open_socket(None, task.pk)

    assert not socket.accepted
    assert socket.close_code == CloseCode.NOT_FOUND


async def test_unknown_task_is_refused_at_the_handshake(
    open_socket: OpenSocket, alice: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk + 1000)

    assert not socket.accepted
    assert socket.close_code == CloseCode.NOT_FOUND


async def test_cookie_session_from_another_site_is_refused(
    open_socket: OpenSocket, alice: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk, origin="https://evil.example")

    assert not socket.accepted


async def test_cookie_session_without_origin_is_refused(
    open_socket: OpenSocket, alice: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk, origin=None)

    assert not socket.accepted


async def test_bearer_token_client_connects_without_origin(
    open_socket: OpenSocket, alice: User, bob: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk, fmt="json", origin=None, token=True)
    assert socket.accepted

    await database_sync_to_async(_post_over_http)(bob, task, "Hello robots")

    event = await socket.receive_event()
    assert event["body"] == "Hello robots"


async def test_bearer_token_of_an_outsider_is_refused(
    open_socket: OpenSocket, mallory: User, task: Task
) -> None:
    socket = await open_socket(mallory, task.pk, origin=None, token=True)

    assert not socket.accepted
    assert socket.close_code == CloseCode.NOT_FOUND


async def test_invalid_bearer_token_is_refused_even_with_a_session_cookie(
    open_socket: OpenSocket, alice: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk, authorization="Bearer collab_not-a-token")

    assert not socket.accepted
    assert socket.close_code == CloseCode.NOT_FOUND


async def test_viewer_posting_gets_an_error_event_and_creates_nothing(
    open_socket: OpenSocket, carol: User, task: Task
) -> None:
    socket = await open_socket(carol, task.pk, fmt="json")
    assert socket.accepted  # viewers read the chat live

    await socket.send_json_to({"type": "chat.message", "body": "Let me in"})

    event = await socket.receive_event()
    assert event["type"] == "error"
    assert event["code"] == "forbidden"
    assert await database_sync_to_async(_message_count)(task) == 0


async def test_viewer_posting_over_html_socket_gets_an_error_fragment(
    open_socket: OpenSocket, carol: User, task: Task
) -> None:
    socket = await open_socket(carol, task.pk)

    await socket.send_json_to({"type": "chat.message", "body": "Let me in"})

    html = await socket.receive_html()
    assert 'id="chat-errors"' in html
    assert "Viewers" in html


async def test_empty_message_gets_an_error_event(
    open_socket: OpenSocket, bob: User, task: Task
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")

    await socket.send_json_to({"type": "chat.message", "body": "   "})

    event = await socket.receive_event()
    assert (event["type"], event["code"]) == ("error", "invalid")
    assert await database_sync_to_async(_message_count)(task) == 0


async def test_message_over_the_character_limit_gets_an_error_event(
    open_socket: OpenSocket, bob: User, task: Task
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")

    await socket.send_json_to({"type": "chat.message", "body": "x" * 20_001})

    event = await socket.receive_event()
    assert (event["type"], event["code"]) == ("error", "invalid")
    assert "20,000" in event["detail"]
    assert await database_sync_to_async(_message_count)(task) == 0


async def test_ping_is_answered_with_pong(open_socket: OpenSocket, carol: User, task: Task) -> None:
    socket = await open_socket(carol, task.pk, fmt="json")

    await socket.send_json_to({"type": "ping"})

    assert await socket.receive_event() == {"type": "pong"}


@pytest.mark.parametrize(
    ("frame", "reason"),
    [
        ("this is not json", "not valid JSON"),
        ('["chat.message", "hi"]', "not a JSON object"),
        ('{"type": "chat.delete", "id": 1}', "unknown frame type"),
        ('{"body": "no type"}', "unknown frame type"),
        ('{"type": "chat.message", "body": 42}', "needs a string 'body'"),
    ],
)
async def test_malformed_frame_closes_the_socket_with_4400_and_is_logged(
    open_socket: OpenSocket,
    bob: User,
    task: Task,
    caplog: pytest.LogCaptureFixture,
    frame: str,
    reason: str,
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")

    with caplog.at_level(logging.WARNING, logger="collab.realtime"):
        await socket.send_to(text_data=frame)
        code = await socket.receive_close()

    assert code == CloseCode.INVALID_FRAME == 4400
    assert reason in caplog.text
    assert "bob" in caplog.text


async def test_frame_over_64_kb_closes_the_socket_with_4413_and_is_logged(
    open_socket: OpenSocket, bob: User, task: Task, caplog: pytest.LogCaptureFixture
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")
    frame = json.dumps({"type": "chat.message", "body": "x" * (64 * 1024)})

    with caplog.at_level(logging.WARNING, logger="collab.realtime"):
        await socket.send_to(text_data=frame)
        code = await socket.receive_close()

    assert code == CloseCode.FRAME_TOO_LARGE == 4413
    assert "too large" in caplog.text
    assert await database_sync_to_async(_message_count)(task) == 0


async def test_binary_frame_over_64_kb_closes_the_socket_with_4413(
    open_socket: OpenSocket, bob: User, task: Task
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")

    await socket.send_to(bytes_data=b"x" * (64 * 1024 + 1))

    assert await socket.receive_close() == CloseCode.FRAME_TOO_LARGE


def _remove(workspace: Workspace, owner: User, user: User) -> None:
    remove_member(
        actor=factories.membership_of(workspace, owner),
        membership=factories.membership_of(workspace, user),
    )


async def test_member_removed_while_connected_is_closed_with_4403_on_posting(
    open_socket: OpenSocket, alice: User, bob: User, workspace: Workspace, task: Task
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")
    await database_sync_to_async(_remove)(workspace, alice, bob)

    await socket.send_json_to({"type": "chat.message", "body": "Still here?"})

    assert await socket.receive_close() == CloseCode.FORBIDDEN == 4403
    assert await database_sync_to_async(_message_count)(task) == 0


async def test_member_removed_while_connected_is_closed_with_4403_at_once(
    open_socket: OpenSocket, alice: User, bob: User, workspace: Workspace, task: Task
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")

    await database_sync_to_async(_remove)(workspace, alice, bob)

    assert await socket.receive_close() == CloseCode.FORBIDDEN


async def test_removed_member_is_closed_with_4403_even_when_leaving_the_groups_fails(
    open_socket: OpenSocket,
    alice: User,
    bob: User,
    workspace: Workspace,
    task: Task,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # given bob's socket, and a channel layer whose next group_discard fails (Redis away for
    # a moment): the close must not wait on it, or bob's page sees 1011 (or nothing) and
    # reconnects instead of being told he is no longer a member
    socket = await open_socket(bob, task.pk, fmt="json")
    layer = get_channel_layer()
    discard = layer.group_discard
    failures: list[str] = []

    async def failing_once(group: str, channel: str) -> None:
        if not failures:
            failures.append(group)
            raise ConnectionError("the channel layer is away")
        await discard(group, channel)

    monkeypatch.setattr(layer, "group_discard", failing_once)

    # when alice removes him
    with caplog.at_level(logging.WARNING, logger="collab.realtime.consumers"):
        await database_sync_to_async(_remove)(workspace, alice, bob)

        # then his socket is closed with the documented code all the same
        assert await socket.receive_close() == CloseCode.FORBIDDEN
    assert failures
    assert "could not leave the groups" in caplog.text


async def test_removed_member_receives_no_more_messages(
    open_socket: OpenSocket, alice: User, bob: User, workspace: Workspace, task: Task
) -> None:
    bobs = await open_socket(bob, task.pk, fmt="json")
    alices = await open_socket(alice, task.pk, fmt="json")
    await database_sync_to_async(_remove)(workspace, alice, bob)
    assert await bobs.receive_close() == CloseCode.FORBIDDEN

    await alices.send_json_to({"type": "chat.message", "body": "Just us now"})

    assert (await alices.receive_event())["body"] == "Just us now"
    assert await bobs.receive_nothing()


def _demote(workspace: Workspace, owner: User, user: User) -> None:
    change_role(
        actor=factories.membership_of(workspace, owner),
        membership=factories.membership_of(workspace, user),
        role="viewer",
    )


async def test_editor_demoted_to_viewer_while_connected_can_no_longer_post(
    open_socket: OpenSocket, alice: User, bob: User, workspace: Workspace, task: Task
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")
    await database_sync_to_async(_demote)(workspace, alice, bob)

    await socket.send_json_to({"type": "chat.message", "body": "Can I still?"})

    # refused, and told of the new role (in either order: the role check runs on its own)
    events = {event["type"]: event for event in [await socket.receive_event() for _ in "12"]}
    assert events["error"]["code"] == "forbidden"
    assert (events["access.changed"]["role"], events["access.changed"]["can_edit"]) == (
        "viewer",
        False,
    )
    assert await database_sync_to_async(_message_count)(task) == 0


async def test_task_status_change_reaches_open_sockets(
    open_socket: OpenSocket, alice: User, bob: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk, fmt="json")

    def _set_status() -> int:
        client = _client(bob)
        response = client.post(
            reverse("tasks:status", args=[task.pk]), {"status": "done"}, HTTP_HX_REQUEST="true"
        )
        return response.status_code

    assert await database_sync_to_async(_set_status)() == 204
    event = await socket.receive_event()
    assert (event["type"], event["id"], event["status"]) == ("task.changed", task.pk, "done")


@pytest.mark.parametrize("body", ["nul\x00here", "half \ud83d of an emoji", '"\\u0000"'])
async def test_a_message_a_database_cannot_store_gets_an_error_event_not_1011(
    open_socket: OpenSocket, bob: User, task: Task, body: str
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")

    # as a JSON text frame with the escapes a client would send ("\u0000", "\ud83d")
    frame = json.dumps({"type": "chat.message", "body": body})
    if body.startswith('"'):
        frame = '{"type": "chat.message", "body": "escaped \\u0000 NUL"}'
    await socket.send_to(text_data=frame)

    event = await socket.receive_event()
    assert (event["type"], event["code"]) == ("error", "invalid")
    assert await database_sync_to_async(_message_count)(task) == 0
    await socket.send_json_to({"type": "ping"})  # and the socket is still open
    assert (await socket.receive_event())["type"] == "pong"


async def test_deeply_nested_json_closes_with_4400_not_1011(
    open_socket: OpenSocket, bob: User, task: Task
) -> None:
    socket = await open_socket(bob, task.pk, fmt="json")

    await socket.send_to(text_data="[" * 30_000 + "]" * 30_000)

    assert await socket.receive_close() == CloseCode.INVALID_FRAME


@pytest.mark.parametrize(
    ("origin", "host", "accepted"),
    [
        ("http://testserver:8000", "testserver:8000", True),
        ("http://testserver", "testserver", True),
        ("http://testserver:9999", "testserver:8000", False),  # another port: another site
        ("http://testserver:9999", None, False),
        ("https://testserver", "testserver:80", False),
    ],
)
async def test_the_origin_check_compares_the_port_too(
    alice: User, task: Task, origin: str, host: str | None, accepted: bool
) -> None:
    cookie = await database_sync_to_async(_session_cookie)(alice)
    headers = [(b"origin", origin.encode()), (b"cookie", cookie.encode())]
    if host is not None:
        headers.append((b"host", host.encode()))
    socket = WebsocketCommunicator(application, f"/ws/tasks/{task.pk}/chat", headers=headers)
    connected, _ = await socket.connect(timeout=WAIT)
    assert connected is accepted
    if connected:
        await socket.disconnect()
