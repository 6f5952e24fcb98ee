"""The document WebSocket: y-websocket sync, awareness, acknowledgements, authorisation and bad
frames. Clients authenticate with API tokens (the session + Origin path is auth.py's)."""

from __future__ import annotations

import asyncio
import json

import pytest
from channels.db import database_sync_to_async
from django.db import connection

from collab.lib import ytext
from collab.realtime import yprotocol
from collab.tasks import documents
from collab.tasks.models import Document, DocumentUpdate
from collab.workspaces.models import Role
from tests.realtime.yclient import YClient

pytestmark = pytest.mark.django_db(transaction=True)


def _document(task_id: int) -> Document:
    return Document.objects.get(task_id=task_id)


async def _text_in_db(task_id: int) -> str:
    document = await database_sync_to_async(_document)(task_id)
    return document.text


async def test_edits_reach_the_other_clients_and_the_database(connect, alice, bob, task):
    alice_client = await connect(alice, task)
    bob_client = await connect(bob, task)

    await alice_client.insert(0, "Agenda: ")
    await bob_client.wait_for(lambda: bob_client.value == "Agenda: ")
    await bob_client.insert(8, "coffee ☕ and 日本語")
    await alice_client.wait_for(lambda: alice_client.value == "Agenda: coffee ☕ and 日本語")

    await alice_client.wait_for(lambda: alice_client.acknowledged)
    await bob_client.wait_for(lambda: bob_client.acknowledged)
    assert await _text_in_db(task.pk) == "Agenda: coffee ☕ and 日本語"
    labels = await database_sync_to_async(
        lambda: set(DocumentUpdate.objects.values_list("author_label", flat=True))
    )()
    assert labels == {"alice", "bob"}
    await alice_client.close()
    await bob_client.close()


async def test_a_late_joiner_gets_the_whole_document(connect, alice, bob, task):
    alice_client = await connect(alice, task)
    await alice_client.insert(0, "first line\n")
    await alice_client.wait_for(lambda: alice_client.acknowledged)

    bob_client = await connect(bob, task)
    await bob_client.wait_for(lambda: bob_client.value == "first line\n")
    await alice_client.close()
    await bob_client.close()


async def test_existing_text_is_seeded_once_however_often_it_is_loaded(
    connect, rooms, alice, task, settings
):
    settings.DOCUMENT_ROOM_IDLE_SECONDS = 0.01
    await database_sync_to_async(
        lambda: Document.objects.filter(task=task).update(text="Imported notes")
    )()
    for _ in range(3):
        client = await connect(alice, task)
        await client.wait_for(lambda c=client: c.value == "Imported notes")
        await client.close()
        await asyncio.sleep(0.1)  # the room unloads; the next connect loads it again
        assert task.document.pk not in rooms.rooms


async def test_acknowledgement_means_the_update_is_in_the_database(connect, alice, task):
    client = await connect(alice, task)
    await client.insert(0, "durable")
    assert not client.acknowledged  # nothing is acknowledged before the batch is written

    await client.wait_for(lambda: client.acknowledged)

    rows = await database_sync_to_async(lambda: DocumentUpdate.objects.count())()
    assert rows >= 1
    assert await _text_in_db(task.pk) == "durable"
    await client.close()


async def test_a_socket_is_acknowledged_at_most_once_per_interval(connect, alice, task, settings):
    settings.DOCUMENT_ACK_INTERVAL = 3.0
    client = await connect(alice, task)
    await client.insert(0, "a")
    await client.wait_for(lambda: client.acknowledged)  # the first one at once
    await client.insert(1, "b")
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 2.0
    while await _text_in_db(task.pk) != "ab" and loop.time() < deadline:
        await client.pump(0.05)
    assert await _text_in_db(task.pk) == "ab"  # durable...
    await client.pump(0.1)
    assert not client.acknowledged  # ...but acknowledged only at the interval's end

    await client.wait_for(lambda: client.acknowledged, timeout=10.0)
    await client.close()


async def test_viewer_updates_are_dropped_and_the_viewer_is_told(connect, alice, carol, task):
    alice_client = await connect(alice, task)
    carol_client = await connect(carol, task)

    await carol_client.insert(0, "vandalism")
    await carol_client.wait_for(lambda: bool(carol_client.denied))

    assert "read-only" in carol_client.denied[0]
    await alice_client.pump(0.2)
    assert alice_client.value == ""
    assert await _text_in_db(task.pk) == ""
    await alice_client.close()
    await carol_client.close()


async def test_viewers_still_receive_edits_and_share_presence(connect, alice, carol, task):
    alice_client = await connect(alice, task)
    carol_client = await connect(carol, task)

    await carol_client.set_awareness(1, '{"user":{"name":"carol"}}')
    await alice_client.insert(0, "hello")

    await carol_client.wait_for(lambda: carol_client.value == "hello")
    await alice_client.wait_for(lambda: carol_client.doc.client_id in alice_client.awareness)
    await alice_client.close()
    await carol_client.close()


async def test_outsiders_are_refused_at_the_handshake(connect, mallory, task):
    await connect(mallory, task, expect=False)


async def test_an_unknown_task_is_refused_at_the_handshake(connect, alice, task):
    task.pk = 999_999
    await connect(alice, task, expect=False)


async def test_an_invalid_token_is_refused(application, rooms, task):
    client = YClient(application, task.pk, [(b"authorization", b"Bearer collab_nope")])
    assert await client.connect() is False


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        (b"\x00\x02\x05\x01", 4400),  # update shorter than its declared length
        (b"\x00\x02\x03\xff\xff\xff", 4400),  # an update Yjs cannot decode
        (b"\x00\x07\x00", 4400),  # unknown sync step
        (b"\x09", 4400),  # unknown message type
        (b"\x00\x02\x02\x00\x00\x00", 4400),  # trailing byte
        (b"\x01\x0c\x01\x05\x01\x08not json", 4400),  # awareness state that is not JSON
        (b"\x00\x02" + b"\x80\x80\x40" + b"\x00" * (1024 * 1024), 4413),  # over 1 MiB
    ],
)
async def test_bad_frames_close_the_socket_without_touching_the_document(
    connect, alice, task, frame, code
):
    client = await connect(alice, task)
    await client.insert(0, "keep me")
    await client.wait_for(lambda: client.acknowledged)

    await client.send(frame)
    await client.wait_for(lambda: client.closed_with is not None)

    assert client.closed_with == code
    assert await _text_in_db(task.pk) == "keep me"


async def test_text_frames_close_the_socket(connect, alice, task):
    client = await connect(alice, task)
    await client.communicator.send_to(text_data='{"type": "update"}')
    await client.wait_for(lambda: client.closed_with is not None)
    assert client.closed_with == 4400


async def test_a_socket_is_closed_with_its_code_even_when_leaving_its_room_fails(
    connect, alice, task, monkeypatch
):
    # given a room whose leave fails once (sharing the departure across processes, Redis away)
    from collab.realtime.rooms import Room

    leave = Room.leave
    failures = []

    async def failing_once(self, peer):
        if not failures:
            failures.append(peer)
            raise ConnectionError("Redis went away")
        await leave(self, peer)

    monkeypatch.setattr(Room, "leave", failing_once)
    client = await connect(alice, task)

    # when the socket sends a frame that is not part of the protocol
    await client.communicator.send_to(text_data='{"type": "update"}')

    # then it is closed with the documented code all the same, and the leave was tried
    await client.wait_for(lambda: client.closed_with is not None)
    assert client.closed_with == 4400
    assert failures


async def test_awareness_is_echoed_shared_and_cleared_when_a_socket_leaves(
    connect, alice, bob, task
):
    alice_client = await connect(alice, task)
    bob_client = await connect(bob, task)

    await alice_client.set_awareness(1, '{"user":{"name":"alice","color":"#f00"}}')
    alice_id = alice_client.doc.client_id
    await alice_client.wait_for(lambda: alice_id in alice_client.awareness)  # the echo
    await bob_client.wait_for(lambda: alice_id in bob_client.awareness)

    # the server stamps who really sent it
    assert json.loads(bob_client.awareness[alice_id])["collab"] == {
        "username": "alice",
        "can_edit": True,
    }

    await alice_client.close()
    await bob_client.wait_for(lambda: bob_client.awareness.get(alice_id) == "null")
    await bob_client.close()


async def test_a_socket_cannot_speak_for_another_clients_presence(connect, alice, bob, task):
    alice_client = await connect(alice, task)
    bob_client = await connect(bob, task)
    await alice_client.set_awareness(1, '{"user":{"name":"alice"}}')
    alice_id = alice_client.doc.client_id
    await bob_client.wait_for(lambda: alice_id in bob_client.awareness)

    forged = yprotocol.AwarenessEntry(alice_id, 5, '{"user":{"name":"not alice"}}')
    await bob_client.send(yprotocol.awareness(yprotocol.encode_awareness_update([forged])))
    await alice_client.pump(0.2)

    assert "not alice" not in alice_client.awareness[alice_id]
    await alice_client.close()
    await bob_client.close()


async def test_quiet_sockets_are_kept_alive(connect, alice, task, settings):
    settings.DOCUMENT_KEEPALIVE_SECONDS = 0.2
    client = await connect(alice, task)
    await client.pump(0.05)
    seen = len(client.received)

    await client.wait_for(lambda: len(client.received) > seen, timeout=3)

    assert client.received[-1][:2] == bytes([yprotocol.MESSAGE_SYNC, yprotocol.SYNC_STEP1])
    await client.close()


async def test_rooms_unload_when_idle(connect, rooms, alice, task, settings):
    settings.DOCUMENT_ROOM_IDLE_SECONDS = 0.05
    client = await connect(alice, task)
    await client.insert(0, "bye")
    document_id = next(iter(rooms.rooms))
    await client.close()

    for _ in range(50):
        if document_id not in rooms.rooms:
            break
        await asyncio.sleep(0.02)

    assert document_id not in rooms.rooms
    assert await _text_in_db(task.pk) == "bye"


async def test_one_room_is_shared_by_every_socket_of_a_document(connect, rooms, alice, bob, task):
    alice_client = await connect(alice, task)
    bob_client = await connect(bob, task)
    assert len(rooms.rooms) == 1
    room = next(iter(rooms.rooms.values()))
    assert len(room.peers) == 2
    await alice_client.close()
    await bob_client.close()


async def test_a_server_side_edit_reaches_open_sockets_of_the_same_process(connect, alice, task):
    client = await connect(alice, task)
    await client.insert(0, "typed by alice")
    await client.wait_for(lambda: client.acknowledged)  # the agent reads the persisted state

    def agent_edit() -> None:  # a thread of its own, like the embedded Celery worker
        try:
            documents.replace_in_document(
                task=task, find="", replace=" and 🤖 by the agent", author_label="agent:Scribe"
            )
        finally:
            connection.close()

    await asyncio.to_thread(agent_edit)

    await client.wait_for(lambda: client.value == "typed by alice and 🤖 by the agent")
    await client.close()


async def test_rooms_catch_up_with_updates_that_never_came_through_the_relay(
    connect, alice, task, settings
):
    settings.DOCUMENT_CATCHUP_SECONDS = 0.2
    client = await connect(alice, task)
    await client.insert(0, "mine")
    await client.wait_for(lambda: client.acknowledged)

    def write_elsewhere() -> None:  # as another process whose relay message was lost
        loaded = documents.load_document(document_id=task.document.pk)
        doc, text = ytext.doc_from_updates(loaded.state)
        before = doc.get_state()
        text.insert(ytext.utf8_offset(str(text), 4), " + theirs")
        request = documents.AppendRequest(
            document_id=task.document.pk,
            updates=[documents.PendingUpdate(doc.get_update(before), None, "bob")],
            text="mine + theirs",
            previous_text="mine",
            after_id=loaded.last_update_id,
        )
        documents.append_document_updates_many([request])

    await database_sync_to_async(write_elsewhere)()

    await client.wait_for(lambda: client.value == "mine + theirs")
    await client.close()


async def test_a_member_removed_while_connected_is_disconnected(
    connect, bob, task, workspace, settings
):
    settings.DOCUMENT_ROLE_REFRESH_SECONDS = 0
    client = await connect(bob, task)
    await database_sync_to_async(lambda: workspace.memberships.filter(user=bob).delete())()

    await client.insert(0, "x")
    await client.wait_for(lambda: client.closed_with is not None)

    assert client.closed_with == 4403


async def test_a_viewer_promoted_to_editor_can_edit_without_reconnecting(
    connect, carol, task, workspace, settings
):
    settings.DOCUMENT_ROLE_REFRESH_SECONDS = 0
    client = await connect(carol, task)
    await database_sync_to_async(
        lambda: workspace.memberships.filter(user=carol).update(role=Role.EDITOR)
    )()
    await client.set_awareness(1, '{"user":{"name":"carol"}}')  # any frame refreshes the role
    await client.pump(0.3)

    await client.insert(0, "now I can ")
    await client.wait_for(lambda: client.acknowledged)
    assert (await _text_in_db(task.pk)).startswith("now I can ")
    await client.close()
