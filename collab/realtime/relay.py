"""Relay of document updates and awareness between the rooms of different processes.

Production (``REDIS_URL`` set): plain Redis pub/sub, one channel per document
(``groups.document_relay_channel``), not the Channels layer: a room publishes every update as
soon as it has applied it, and each web process keeps one subscription connection for the
documents it has loaded. Pub/sub is at-most-once, so messages carry the sender's id and a
per-document sequence number; a gap makes the room re-read the update log, which is the source
of truth (see docs/adr/0004-document-rooms-and-relay.md).

Code without an event loop (Celery workers, management commands, request threads) publishes with
``publish_update``: a synchronous Redis client in production; in the embedded single process it
hands the update to the web server's loop directly.

Wire format of a relay message: ``b"Y1"``, kind (``b"U"`` update or ``b"A"`` awareness),
16-byte sender id, 8-byte big-endian sequence number, then the Yjs payload.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import threading
import uuid
from collections import defaultdict
from collections.abc import Mapping
from typing import Any, Protocol

import redis
import redis.asyncio as aioredis
from django.conf import settings

from collab.realtime.groups import document_relay_channel, document_relay_pattern

log = logging.getLogger(__name__)


class LocalRooms(Protocol):
    """What the relay needs of a process's rooms (``collab.realtime.rooms.RoomManager``): which
    documents have a live room, delivering to them and catching them up. A protocol: the edit
    service publishes through the relay and the rooms read through the edit service, so the
    relay importing the rooms, even for a type, would close a loop."""

    @property
    def rooms(self) -> Mapping[int, Any]: ...

    async def deliver_update(self, document_id: int, update: bytes) -> None: ...

    async def deliver_awareness(self, document_id: int, update: bytes) -> None: ...

    async def catch_up(self, document_id: int | None = None) -> None: ...


MAGIC = b"Y1"
KIND_UPDATE = b"U"
KIND_AWARENESS = b"A"
_HEADER = len(MAGIC) + 1 + 16 + 8
# A gap in a sender's sequence makes the room re-read the log after this delay (the sender
# writes its batch to the database within DOCUMENT_FLUSH_MAX_WAIT plus one transaction).
GAP_CATCHUP_DELAY = 1.0


def encode(kind: bytes, sender: bytes, seq: int, payload: bytes) -> bytes:
    return MAGIC + kind + sender + seq.to_bytes(8, "big") + payload


def decode(message: bytes) -> tuple[bytes, bytes, int, bytes] | None:
    if len(message) < _HEADER or not message.startswith(MAGIC):
        return None
    kind = message[2:3]
    sender = message[3:19]
    seq = int.from_bytes(message[19:27], "big")
    return kind, sender, seq, message[_HEADER:]


class Relay:
    """Embedded mode: one process holds every room, so there is nothing to relay."""

    async def subscribe(self, document_id: int) -> None:
        return None

    async def unsubscribe(self, document_id: int) -> None:
        return None

    def publish_update(self, document_id: int, update: bytes) -> None:
        return None

    def publish_awareness(self, document_id: int, update: bytes) -> None:
        return None

    async def close(self) -> None:
        return None


class RedisRelay(Relay):
    def __init__(self, manager: LocalRooms, url: str) -> None:
        self.manager = manager
        self.sender = uuid.uuid4().bytes
        self.client = aioredis.Redis.from_url(url)
        self.pubsub = self.client.pubsub()
        self._seq: dict[int, itertools.count[int]] = defaultdict(lambda: itertools.count(1))
        self._last_seen: dict[tuple[int, bytes], int] = {}
        self._outbox: asyncio.Queue[tuple[str, bytes]] = asyncio.Queue()
        self._sender_task: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._subscribed = False

    async def subscribe(self, document_id: int) -> None:
        if not self._subscribed:
            # One pattern subscription per process: rooms come and go without a round trip.
            await self.pubsub.psubscribe(document_relay_pattern())
            self._subscribed = True
            self._listener = asyncio.create_task(self._listen())

    async def unsubscribe(self, document_id: int) -> None:
        return None  # the pattern subscription stays; messages for unloaded rooms are skipped

    def publish_update(self, document_id: int, update: bytes) -> None:
        self._publish(document_id, KIND_UPDATE, update)

    def publish_awareness(self, document_id: int, update: bytes) -> None:
        self._publish(document_id, KIND_AWARENESS, update)

    def _publish(self, document_id: int, kind: bytes, payload: bytes) -> None:
        seq = next(self._seq[document_id]) if kind == KIND_UPDATE else 0
        message = encode(kind, self.sender, seq, payload)
        self._outbox.put_nowait((document_relay_channel(document_id), message))
        if self._sender_task is None or self._sender_task.done():
            self._sender_task = asyncio.create_task(self._send_forever())

    async def _send_forever(self) -> None:
        # One sender keeps this process's messages in order; a burst goes out as one pipeline.
        while True:
            batch = [await self._outbox.get()]
            while not self._outbox.empty():
                batch.append(self._outbox.get_nowait())
            try:
                async with self.client.pipeline(transaction=False) as pipe:
                    for channel, message in batch:
                        pipe.publish(channel, message)
                    await pipe.execute()
            except Exception:
                # Lost messages are recovered by the receivers' catch-up from the update log.
                log.exception("relay publish of %d messages failed", len(batch))
                await asyncio.sleep(0.5)

    async def _listen(self) -> None:
        while True:
            try:
                message = await self.pubsub.get_message(ignore_subscribe_messages=True, timeout=1)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("relay subscription failed; re-reading the logs of open rooms")
                await asyncio.sleep(1.0)
                await self.manager.catch_up()
                continue
            if message is None:
                continue
            await self._dispatch(message)

    async def _dispatch(self, message: dict[str, Any]) -> None:
        channel = message.get("channel")
        data = message.get("data")
        if not isinstance(channel, bytes) or not isinstance(data, bytes):
            return
        try:
            document_id = int(channel.rsplit(b".", 1)[-1])
        except ValueError:
            return
        decoded = decode(data)
        if decoded is None:
            return
        kind, sender, seq, payload = decoded
        if sender == self.sender or document_id not in self.manager.rooms:
            return
        if kind == KIND_AWARENESS:
            await self.manager.deliver_awareness(document_id, payload)
            return
        key = (document_id, sender)
        previous = self._last_seen.get(key)
        self._last_seen[key] = seq
        await self.manager.deliver_update(document_id, payload)
        if previous is not None and seq > previous + 1:
            log.warning("relay gap on document %s: re-reading the log", document_id)
            asyncio.get_running_loop().call_later(
                GAP_CATCHUP_DELAY,
                lambda: asyncio.ensure_future(self.manager.catch_up(document_id)),
            )

    async def close(self) -> None:
        for task in (self._listener, self._sender_task):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        with contextlib.suppress(Exception):
            await self.pubsub.aclose()
        with contextlib.suppress(Exception):
            await self.client.aclose()


def make_relay(manager: LocalRooms) -> Relay:
    if settings.REDIS_URL:
        return RedisRelay(manager, settings.REDIS_URL)
    return Relay()


# --- publishing from code without an event loop ----------------------------------------------

_local_managers: dict[asyncio.AbstractEventLoop, LocalRooms] = {}
_sync_client: redis.Redis | None = None
_sync_sender = uuid.uuid4().bytes
_sync_seq: dict[int, itertools.count[int]] = defaultdict(lambda: itertools.count(1))
_lock = threading.Lock()


def register_local_manager(loop: asyncio.AbstractEventLoop, manager: LocalRooms) -> None:
    with _lock:
        for old in [old for old in _local_managers if old.is_closed()]:
            del _local_managers[old]
        _local_managers[loop] = manager


def publish_update(document_id: int, update: bytes) -> None:
    """Send a persisted update to every live room of the document; never raises (rooms catch
    up from the log anyway). Call it on commit."""
    try:
        if settings.REDIS_URL:
            _publish_redis(document_id, update)
        else:
            _deliver_in_process(document_id, update)
    except Exception:
        log.exception("could not publish an update of document %s", document_id)


def publish_awareness(document_id: int, update: bytes) -> None:
    """Send an awareness update (y-protocols encoding) to every live room of the document, as
    another process's presence: rooms forget it after ``awareness.REMOTE_AWARENESS_TIMEOUT`` (30 s)
    unless it is renewed. For server-side participants (agents); never raises."""
    try:
        if settings.REDIS_URL:
            _publish_redis(document_id, update, kind=KIND_AWARENESS)
        else:
            _deliver_in_process(document_id, update, kind=KIND_AWARENESS)
    except Exception:
        log.exception("could not publish awareness of document %s", document_id)


def _publish_redis(document_id: int, update: bytes, *, kind: bytes = KIND_UPDATE) -> None:
    global _sync_client
    # Numbered and sent under one lock: threads of one worker process (the threads pool) must
    # not send a document's updates out of order, or rooms would see a gap and re-read the log.
    with _lock:
        if _sync_client is None:
            _sync_client = redis.Redis.from_url(settings.REDIS_URL or "")
        seq = next(_sync_seq[document_id]) if kind == KIND_UPDATE else 0
        message = encode(kind, _sync_sender, seq, update)
        _sync_client.publish(document_relay_channel(document_id), message)


def _deliver_in_process(document_id: int, update: bytes, *, kind: bytes = KIND_UPDATE) -> None:
    with _lock:
        targets = [(loop, m) for loop, m in _local_managers.items() if loop.is_running()]
    for loop, manager in targets:
        if document_id not in manager.rooms:
            continue
        coro = (
            manager.deliver_update(document_id, update)
            if kind == KIND_UPDATE
            else manager.deliver_awareness(document_id, update)
        )
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            loop.create_task(coro)
        else:
            asyncio.run_coroutine_threadsafe(coro, loop)
