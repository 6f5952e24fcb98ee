"""The Redis relay's message handling (no Redis needed: messages are handed in directly)."""

from __future__ import annotations

import asyncio

import pytest

from collab.realtime import relay


class FakeManager:
    def __init__(self) -> None:
        self.rooms = {7: object()}
        self.updates: list[bytes] = []
        self.awareness: list[bytes] = []
        self.catch_ups: list[int | None] = []

    async def deliver_update(self, document_id: int, update: bytes) -> None:
        self.updates.append(update)

    async def deliver_awareness(self, document_id: int, update: bytes) -> None:
        self.awareness.append(update)

    async def catch_up(self, document_id: int | None = None) -> None:
        self.catch_ups.append(document_id)


def _message(kind: bytes, sender: bytes, seq: int, payload: bytes, document_id: int = 7) -> dict:
    channel = f"prefix:doc.{document_id}".encode()
    return {
        "type": "pmessage",
        "channel": channel,
        "data": relay.encode(kind, sender, seq, payload),
    }


@pytest.fixture
def relayed(monkeypatch):
    monkeypatch.setattr(relay, "GAP_CATCHUP_DELAY", 0.01)
    manager = FakeManager()
    return manager, relay.RedisRelay(manager, "redis://127.0.0.1:6379/15")  # never connects


async def test_a_sequence_gap_makes_the_room_reread_the_log(relayed):
    manager, redis_relay = relayed
    other = b"o" * 16
    await redis_relay._dispatch(_message(relay.KIND_UPDATE, other, 1, b"u1"))
    await redis_relay._dispatch(_message(relay.KIND_UPDATE, other, 3, b"u3"))  # 2 was lost
    await asyncio.sleep(0.1)

    assert manager.updates == [b"u1", b"u3"]
    assert manager.catch_ups == [7]


async def test_consecutive_messages_need_no_catch_up(relayed):
    manager, redis_relay = relayed
    other = b"o" * 16
    for seq in (1, 2, 3):
        await redis_relay._dispatch(_message(relay.KIND_UPDATE, other, seq, b"u"))
    await asyncio.sleep(0.05)
    assert manager.catch_ups == []


async def test_own_messages_and_unloaded_documents_are_ignored(relayed):
    manager, redis_relay = relayed
    await redis_relay._dispatch(_message(relay.KIND_UPDATE, redis_relay.sender, 1, b"mine"))
    await redis_relay._dispatch(_message(relay.KIND_UPDATE, b"o" * 16, 1, b"x", document_id=8))
    await redis_relay._dispatch({"type": "pmessage", "channel": b"prefix:doc.7", "data": b"junk"})
    assert manager.updates == []


async def test_awareness_is_relayed_without_sequence_checks(relayed):
    manager, redis_relay = relayed
    await redis_relay._dispatch(_message(relay.KIND_AWARENESS, b"o" * 16, 0, b"aw"))
    assert manager.awareness == [b"aw"]


def test_threads_of_a_worker_publish_a_documents_updates_in_sequence_order(monkeypatch, settings):
    # given a worker process whose threads publish updates of one document at once
    import threading
    import time

    sent: list[int] = []

    class SlowClient:
        def publish(self, channel: str, message: bytes) -> None:
            _, _, seq, _ = relay.decode(message)
            time.sleep(0.002)  # the network: another thread could overtake here
            sent.append(seq)

    settings.REDIS_URL = "redis://127.0.0.1:6379/15"
    monkeypatch.setattr(relay, "_sync_client", SlowClient())
    monkeypatch.setattr(relay, "_sync_seq", relay.defaultdict(lambda: relay.itertools.count(1)))
    threads = [threading.Thread(target=relay.publish_update, args=(9, b"u")) for _ in range(20)]
    # when they all publish
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # then Redis receives them numbered in order, so no room sees a false gap
    assert sent == list(range(1, 21))
