"""What a room sends in one turn of the event loop goes out once (collab/realtime/fanout.py):
the turn's updates merged into one message per socket, encoded once for every socket that wrote
none of them, one relay message, and awareness collapsed to the latest state per client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from channels.db import database_sync_to_async

from collab.lib import ytext
from collab.realtime import fanout, yprotocol
from collab.realtime.yprotocol import AwarenessEntry
from collab.tasks.models import Document, Task

pytestmark = pytest.mark.django_db(transaction=True)


class FakePeer:
    def __init__(self, user_id: int, label: str) -> None:
        self.user_id = user_id
        self.label = label
        self.display_name = label
        self.role = "editor"
        self.can_edit = True
        self.frames: list[bytes] = []

    async def send_bytes(self, data: bytes) -> None:
        self.frames.append(data)

    async def close_socket(self, code: int) -> None:
        return None

    def of_kind(self, kind: int, step: int | None = None) -> list[bytes]:
        return [
            frame
            for frame in self.frames
            if frame[0] == kind and (step is None or frame[1] == step)
        ]


class RecordingRelay:
    def __init__(self) -> None:
        self.updates: list[bytes] = []
        self.awareness: list[bytes] = []

    async def subscribe(self, document_id: int) -> None:
        return None

    async def unsubscribe(self, document_id: int) -> None:
        return None

    def publish_update(self, document_id: int, update: bytes) -> None:
        self.updates.append(update)

    def publish_awareness(self, document_id: int, update: bytes) -> None:
        self.awareness.append(update)

    async def close(self) -> None:
        return None


def _update(text: str) -> bytes:
    """An update typing ``text`` from a fresh Yjs client of its own."""
    doc, ytext_ = ytext.new_doc()
    changes: list[bytes] = []
    doc.observe(lambda event: changes.append(event.update))
    ytext_.insert(0, text)
    return changes[0]


def _text_of(*updates: bytes) -> str:
    doc, text = ytext.new_doc()
    for update in updates:
        doc.apply_update(update)
    return str(text)


def _payload(frame: bytes) -> bytes:
    reader = yprotocol._Reader(frame)
    reader.var_uint()
    reader.var_uint()
    return reader.var_bytes()


async def _until(predicate: Any) -> None:
    for _ in range(500):
        if predicate():
            return
        await asyncio.sleep(0.01)
    raise AssertionError("condition not met in time")


async def _room_with(rooms: Any, task: Task, *peers: FakePeer) -> Any:
    document = await database_sync_to_async(lambda: Document.objects.get_or_create(task=task)[0])()
    rooms.relay = RecordingRelay()
    for peer in peers:
        room = await rooms.join(document.pk, peer)
    for peer in peers:
        peer.frames.clear()
    return room


async def test_updates_of_one_turn_reach_each_socket_as_one_message(rooms, task):
    alice, bob, carol = FakePeer(1, "alice"), FakePeer(2, "bob"), FakePeer(3, "carol")
    room = await _room_with(rooms, task, alice, bob, carol)
    from_alice, from_bob = _update("Agenda "), _update("coffee")

    # given two updates from two sockets applied in the same turn of the event loop
    await room.receive(alice, yprotocol.SyncMessage(yprotocol.SYNC_UPDATE, from_alice))
    await room.receive(bob, yprotocol.SyncMessage(yprotocol.SYNC_UPDATE, from_bob))
    await _until(lambda: carol.of_kind(yprotocol.MESSAGE_SYNC, yprotocol.SYNC_UPDATE))

    # then the socket that wrote neither gets both in one message
    (to_carol,) = carol.of_kind(yprotocol.MESSAGE_SYNC, yprotocol.SYNC_UPDATE)
    assert sorted(_text_of(_payload(to_carol))) == sorted("Agenda coffee")
    # each writer gets the other's update only, in one message
    (to_alice,) = alice.of_kind(yprotocol.MESSAGE_SYNC, yprotocol.SYNC_UPDATE)
    (to_bob,) = bob.of_kind(yprotocol.MESSAGE_SYNC, yprotocol.SYNC_UPDATE)
    assert _text_of(_payload(to_alice)) == "coffee"
    assert _text_of(_payload(to_bob)) == "Agenda "
    # and the other processes get one relay message holding both
    (relayed,) = room.manager.relay.updates
    assert _text_of(relayed) == _text_of(_payload(to_carol))
    assert room.doc.get_state() == _text_doc_state(from_alice, from_bob)


def _text_doc_state(*updates: bytes) -> bytes:
    doc, _ = ytext.new_doc()
    for update in updates:
        doc.apply_update(update)
    return doc.get_state()


async def test_updates_of_separate_turns_are_sent_separately(rooms, task):
    alice, bob = FakePeer(1, "alice"), FakePeer(2, "bob")
    room = await _room_with(rooms, task, alice, bob)

    await room.receive(alice, yprotocol.SyncMessage(yprotocol.SYNC_UPDATE, _update("one")))
    await _until(lambda: bob.of_kind(yprotocol.MESSAGE_SYNC, yprotocol.SYNC_UPDATE))
    await room.receive(alice, yprotocol.SyncMessage(yprotocol.SYNC_UPDATE, _update("two")))
    await _until(lambda: len(bob.of_kind(yprotocol.MESSAGE_SYNC, yprotocol.SYNC_UPDATE)) == 2)

    assert not alice.of_kind(yprotocol.MESSAGE_SYNC, yprotocol.SYNC_UPDATE)  # never its own
    assert len(room.manager.relay.updates) == 2


async def test_awareness_of_one_turn_is_the_latest_state_per_client(rooms, task):
    alice, bob = FakePeer(1, "alice"), FakePeer(2, "bob")
    room = await _room_with(rooms, task, alice, bob)
    moving = '{"user": {"name": "alice"}, "cursor": null}'

    # given a socket whose presence changes twice in one turn
    for clock in (1, 2, 3):
        entry = AwarenessEntry(4242, clock, moving)
        await room.receive(alice, yprotocol.AwarenessMessage((entry,)))
    await _until(lambda: bob.of_kind(yprotocol.MESSAGE_AWARENESS))

    # then the others get one message with the latest state, the sender its echo at its clock
    (to_bob,) = bob.of_kind(yprotocol.MESSAGE_AWARENESS)
    (entry,) = yprotocol.parse_awareness_update(yprotocol._Reader(to_bob[1:]).var_bytes())
    assert entry.client_id == 4242
    assert entry.clock >= 3
    (echo,) = alice.of_kind(yprotocol.MESSAGE_AWARENESS)
    (own,) = yprotocol.parse_awareness_update(yprotocol._Reader(echo[1:]).var_bytes())
    assert own.clock == 3
    (relayed,) = room.manager.relay.awareness
    assert [e.clock for e in yprotocol.parse_awareness_update(relayed)] == [3]


def test_chunks_keep_the_order_and_stay_under_the_cap():
    items = [fanout.OutgoingUpdate(bytes(size), author=None, relay=False) for size in (4, 4, 9, 3)]

    chunks = fanout.chunks(items, cap=8)

    assert [[len(item.update) for item in chunk] for chunk in chunks] == [[4, 4], [9], [3]]
