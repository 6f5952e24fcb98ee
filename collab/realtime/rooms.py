"""Yjs rooms: one shared pycrdt Doc (plus awareness) per task document per web process.

A socket's update is applied to the room's Doc once; what actually changed (Yjs ignores
duplicates and holds back updates whose dependencies are missing) is sent straight to the other
local sockets, queued for the batched database write, and published to the relay for rooms of
the same document in other processes. After a batch is committed, each socket that contributed
to it is sent a sync step 1 carrying the state vector of what is now durable: that is the
acknowledgement (docs/protocol.md "Document").

Rooms re-read the update log every ``DOCUMENT_CATCHUP_SECONDS`` and whenever a write shows rows
they had not seen, so an update the relay dropped still arrives. Everything here runs on the
event loop of the web process; the database is reached through ``database_sync_to_async``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeVar

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import connection
from pycrdt import TransactionEvent, merge_updates

from collab.lib import ytext
from collab.realtime import relay, yprotocol
from collab.realtime.yprotocol import AwarenessEntry
from collab.tasks import documents

log = logging.getLogger(__name__)

T = TypeVar("T")

# How long another process's awareness entry lives without a renewal (y-protocols uses 30 s).
REMOTE_AWARENESS_TIMEOUT = 30.0


def database(func: Callable[..., T]) -> Callable[..., Awaitable[T]]:
    """Run ``func`` in the thread that Django's ORM uses from async code, keeping its database
    connection open between calls (``database_sync_to_async`` closes it around every call,
    which costs a new SQLite connection per keystroke batch); closed after an error."""

    def call(*args: Any, **kwargs: Any) -> T:
        try:
            return func(*args, **kwargs)
        except Exception:
            connection.close()
            raise

    return sync_to_async(call, thread_sensitive=True)


class Peer(Protocol):
    """One socket of a room (the document consumer, or a test double)."""

    user_id: int | None
    label: str
    can_edit: bool

    async def send_bytes(self, data: bytes) -> None: ...


@dataclass
class _PeerState:
    last_sent: float = field(default_factory=time.monotonic)
    client_ids: set[int] = field(default_factory=set)


@dataclass
class _Batch:
    items: list[_Pending]
    state_vector: bytes
    text: str
    request: documents.AppendRequest


@dataclass
class _Pending:
    update: bytes
    peer: Peer | None
    author_id: int | None
    author_label: str


class Room:
    def __init__(self, manager: RoomManager, document_id: int) -> None:
        self.manager = manager
        self.document_id = document_id
        self.doc, self.text = ytext.new_doc()
        self.doc.observe(self._on_change)
        self._changes: list[bytes] = []
        self.peers: dict[Peer, _PeerState] = {}
        self.awareness: dict[int, AwarenessEntry] = {}
        self._awareness_owner: dict[int, Peer] = {}
        self._remote_awareness_seen: dict[int, float] = {}
        # Clock at which other processes' entries were cleared (late echoes are refused).
        self._removed_clock: dict[int, int] = {}
        self.pending: list[_Pending] = []
        self.last_update_id = 0
        self.last_flushed_text: str | None = None
        self.text_dirty = False
        self.closed = False
        self._unload_task: asyncio.Task[None] | None = None
        self._compacting = False
        self._compaction: asyncio.Task[None] | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    async def load(self) -> None:
        loaded = await database(documents.load_document)(document_id=self.document_id)
        self._apply(loaded.state)
        self.last_update_id = loaded.last_update_id
        self.last_flushed_text = loaded.text

    async def join(self, peer: Peer) -> None:
        self.peers[peer] = _PeerState()
        if self._unload_task is not None:
            self._unload_task.cancel()
            self._unload_task = None
        await self._send(peer, yprotocol.sync_step1(self.doc.get_state()))
        if self.awareness:
            entries = list(self.awareness.values())
            await self._send(peer, yprotocol.awareness(yprotocol.encode_awareness_update(entries)))

    async def leave(self, peer: Peer) -> None:
        state = self.peers.pop(peer, None)
        if state is not None and state.client_ids:
            gone = []
            for client_id in state.client_ids:
                entry = self.awareness.pop(client_id, None)
                self._awareness_owner.pop(client_id, None)
                if entry is not None:
                    gone.append(AwarenessEntry(client_id, entry.clock + 1, "null"))
            if gone:
                await self._share_awareness(gone, exclude=None)
        if not self.peers and self._unload_task is None:
            self._unload_task = asyncio.create_task(self._unload_when_idle())

    async def _unload_when_idle(self) -> None:
        await asyncio.sleep(settings.DOCUMENT_ROOM_IDLE_SECONDS)
        await self.manager.unload(self)

    async def close(self) -> None:
        """Flush, record a version, stop the background tasks (the manager calls this)."""
        self.closed = True
        task = self._unload_task
        if task is not None and task is not asyncio.current_task():
            task.cancel()
        await self.flush()
        try:
            await database(documents.checkpoint_document)(
                document_id=self.document_id, text=str(self.text)
            )
        except Exception:
            log.exception("could not record a version of document %s", self.document_id)

    # --- messages from sockets ---------------------------------------------------------------

    async def receive(self, peer: Peer, message: yprotocol.Message) -> None:
        if isinstance(message, yprotocol.SyncMessage):
            await self._receive_sync(peer, message)
        elif isinstance(message, yprotocol.AwarenessMessage):
            await self._receive_awareness(peer, message.entries)
        else:
            entries = list(self.awareness.values())
            await self._send(peer, yprotocol.awareness(yprotocol.encode_awareness_update(entries)))

    async def _receive_sync(self, peer: Peer, message: yprotocol.SyncMessage) -> None:
        if message.step == yprotocol.SYNC_STEP1:
            await self._send(peer, yprotocol.sync_step2(self.doc.get_update(message.payload)))
            return
        if message.payload == yprotocol.EMPTY_UPDATE:
            return
        if not peer.can_edit:
            await self._send(
                peer, yprotocol.permission_denied("read-only: viewers cannot change the document")
            )
            return
        changes = self._apply(message.payload)
        if not changes:
            return
        update = changes[0] if len(changes) == 1 else merge_updates(*changes)
        await self._fan_out(yprotocol.sync_update(update), exclude=peer)
        self.pending.append(_Pending(update, peer, peer.user_id, peer.label))
        self.manager.relay.publish_update(self.document_id, update)
        self._schedule_flush()

    async def _receive_awareness(self, peer: Peer, entries: tuple[AwarenessEntry, ...]) -> None:
        state = self.peers.get(peer)
        if state is None:
            return
        accepted = []
        for entry in entries:
            owner = self._awareness_owner.get(entry.client_id)
            if owner is not None and owner is not peer:
                continue  # a socket speaks only for its own Yjs clients
            if entry.client_id in self._remote_awareness_seen:
                # Another process's (or an agent's) entry, echoed back: y-websocket clients
                # re-send every awareness change they receive. Its owner renews and clears it.
                continue
            if entry.clock <= self._removed_clock.get(entry.client_id, -1) and not entry.removed:
                continue  # a late echo of a state that has since been cleared
            current = self.awareness.get(entry.client_id)
            if current is not None and entry.clock < current.clock:
                continue
            if entry.removed:
                self.awareness.pop(entry.client_id, None)
                self._awareness_owner.pop(entry.client_id, None)
                state.client_ids.discard(entry.client_id)
            else:
                entry = _verified(entry, peer)
                self.awareness[entry.client_id] = entry
                self._awareness_owner[entry.client_id] = peer
                state.client_ids.add(entry.client_id)
            accepted.append(entry)
        if accepted:
            # Echoed to the sender too, as y-websocket's server does: it keeps the socket alive.
            await self._share_awareness(accepted, exclude=None)
            self.manager.relay.publish_awareness(
                self.document_id, yprotocol.encode_awareness_update(accepted)
            )

    async def _share_awareness(self, entries: list[AwarenessEntry], exclude: Peer | None) -> None:
        await self._fan_out(
            yprotocol.awareness(yprotocol.encode_awareness_update(entries)), exclude=exclude
        )

    # --- updates from elsewhere (relay, services, the log) -----------------------------------

    async def apply_remote(self, update: bytes) -> bool:
        """Apply an update persisted (or being persisted) by someone else; True if it changed
        anything. It is sent to every local socket and the text column is rewritten."""
        changes = self._apply(update)
        if not changes:
            return False
        merged = changes[0] if len(changes) == 1 else merge_updates(*changes)
        await self._fan_out(yprotocol.sync_update(merged), exclude=None)
        self.text_dirty = True
        self._schedule_flush()
        return True

    async def apply_remote_awareness(self, update: bytes) -> None:
        try:
            entries = yprotocol.parse_awareness_update(update)
        except yprotocol.ProtocolError:
            return
        accepted = []
        now = time.monotonic()
        for entry in entries:
            if entry.client_id in self._awareness_owner:
                continue
            current = self.awareness.get(entry.client_id)
            if current is not None and entry.clock < current.clock:
                continue
            if entry.removed:
                self.awareness.pop(entry.client_id, None)
                self._remote_awareness_seen.pop(entry.client_id, None)
                self._removed_clock[entry.client_id] = entry.clock
            else:
                self.awareness[entry.client_id] = entry
                self._remote_awareness_seen[entry.client_id] = now
            accepted.append(entry)
        if accepted:
            await self._share_awareness(accepted, exclude=None)

    async def catch_up(self) -> None:
        """Apply whatever the update log holds that this room has not seen."""
        await self.manager.catch_up(self.document_id)

    async def _apply_rows(self, snapshot: bytes | None, rows: list[tuple[int, bytes]]) -> None:
        if snapshot:
            await self.apply_remote(snapshot)
        for row_id, data in rows:
            if data:  # compaction empties the rows it folded into the snapshot
                await self.apply_remote(data)
            self.last_update_id = max(self.last_update_id, row_id)

    # --- persistence -------------------------------------------------------------------------

    def _schedule_flush(self) -> None:
        self.manager.request_flush(self)

    async def flush(self) -> None:
        await self.manager.flush_rooms([self])

    def _take_batch(self) -> _Batch | None:
        if not self.pending and not self.text_dirty:
            return None
        text = str(self.text)
        batch = _Batch(
            items=self.pending,
            state_vector=self.doc.get_state(),
            text=text,
            request=documents.AppendRequest(
                document_id=self.document_id,
                updates=_merge_by_author(self.pending),
                text=text,
                previous_text=self.last_flushed_text,
                after_id=self.last_update_id,
            ),
        )
        self.pending = []
        self.text_dirty = False
        return batch

    def _restore_batch(self, batch: _Batch) -> None:
        self.pending[:0] = batch.items
        self.text_dirty = True

    async def _after_flush(self, batch: _Batch, result: documents.AppendResult | None) -> None:
        if result is None:  # the document was deleted: nothing more to write
            log.warning("document %s no longer exists; dropping its room", self.document_id)
            return
        self.last_flushed_text = batch.text
        self.last_update_id = max(self.last_update_id, result.last_update_id)
        acked = {item.peer for item in batch.items if item.peer is not None}
        ack = yprotocol.sync_step1(batch.state_vector)
        for peer in acked:
            if peer in self.peers:
                await self._send(peer, ack)
        if result.snapshot or result.missed:
            await self._apply_rows(result.snapshot, result.missed)
        if result.should_compact and not self._compacting:
            self._compacting = True
            self._compaction = asyncio.create_task(self._compact())

    async def _compact(self) -> None:
        try:
            await database(documents.compact_document)(document_id=self.document_id)
        except Exception:
            log.exception("could not compact document %s", self.document_id)
        finally:
            self._compacting = False

    # --- plumbing ----------------------------------------------------------------------------

    def _on_change(self, event: TransactionEvent) -> None:
        self._changes.append(event.update)

    def _apply(self, update: bytes) -> list[bytes]:
        self._changes = []
        self.doc.apply_update(update)
        changes, self._changes = self._changes, []
        return changes

    async def _send(self, peer: Peer, data: bytes) -> None:
        state = self.peers.get(peer)
        if state is not None:
            state.last_sent = time.monotonic()
        try:
            await peer.send_bytes(data)
        except Exception:
            log.debug("send to a closing socket failed", exc_info=True)

    async def _fan_out(self, data: bytes, *, exclude: Peer | None) -> None:
        for peer in list(self.peers):
            if peer is not exclude:
                await self._send(peer, data)

    async def tick(self, now: float, keepalive: float) -> None:
        """Keep quiet sockets alive; forget other processes' awareness entries gone stale."""
        quiet = [peer for peer, state in self.peers.items() if now - state.last_sent >= keepalive]
        if quiet:
            ping = yprotocol.sync_step1(self.doc.get_state())
            for peer in quiet:
                await self._send(peer, ping)
        stale = [
            client_id
            for client_id, seen in self._remote_awareness_seen.items()
            if now - seen > REMOTE_AWARENESS_TIMEOUT
        ]
        if stale:
            gone = []
            for client_id in stale:
                self._remote_awareness_seen.pop(client_id, None)
                entry = self.awareness.pop(client_id, None)
                if entry is not None:
                    gone.append(AwarenessEntry(client_id, entry.clock + 1, "null"))
                    self._removed_clock[client_id] = entry.clock + 1
            if gone:
                await self._share_awareness(gone, exclude=None)


def _verified(entry: AwarenessEntry, peer: Peer) -> AwarenessEntry:
    """Stamp who really sent an awareness state: ``"collab": {"username", "can_edit"}`` (a
    client chooses its display name and colour, but cannot pass itself off as someone else)."""
    state = json.loads(entry.state_json)
    state["collab"] = {"username": peer.label, "can_edit": peer.can_edit}
    return AwarenessEntry(entry.client_id, entry.clock, json.dumps(state, separators=(",", ":")))


def _merge_by_author(batch: list[_Pending]) -> list[documents.PendingUpdate]:
    grouped: dict[tuple[int | None, str], list[bytes]] = {}
    for item in batch:
        grouped.setdefault((item.author_id, item.author_label), []).append(item.update)
    return [
        documents.PendingUpdate(
            data=updates[0] if len(updates) == 1 else merge_updates(*updates),
            author_id=author_id,
            author_label=label,
        )
        for (author_id, label), updates in grouped.items()
    ]


class RoomManager:
    """The rooms of one event loop (one web process), and its relay."""

    def __init__(self) -> None:
        self.rooms: dict[int, Room] = {}
        self._locks: dict[int, asyncio.Lock] = {}
        self.relay: relay.Relay = relay.make_relay(self)
        self._dirty: set[Room] = set()
        self._flusher: asyncio.Task[None] | None = None
        self._flush_lock = asyncio.Lock()
        self._ticker: asyncio.Task[None] | None = None

    # --- one ticker per process: keep-alive of every socket, catch-up of every room ---------

    def _start_ticker(self) -> None:
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.create_task(self._tick_forever())

    async def _tick_forever(self) -> None:
        keepalive = settings.DOCUMENT_KEEPALIVE_SECONDS
        catchup = settings.DOCUMENT_CATCHUP_SECONDS
        tick = max(0.05, min(keepalive / 3, catchup / 3, 2.0))
        last_catchup = time.monotonic()
        while self.rooms:
            await asyncio.sleep(tick)
            now = time.monotonic()
            for room in list(self.rooms.values()):
                try:
                    await room.tick(now, keepalive)
                except Exception:
                    log.exception("tick of document %s failed", room.document_id)
            if now - last_catchup >= catchup:
                last_catchup = now
                await self.catch_up()

    async def catch_up(self, document_id: int | None = None) -> None:
        """Apply what the update log holds that the rooms have not seen (all rooms, in two
        queries, or one room after a relay gap)."""
        rooms = list(self.rooms.values())
        if document_id is not None:
            rooms = [room for room in rooms if room.document_id == document_id]
        if not rooms:
            return
        try:
            found = await database(documents.list_updates_after_many)(
                {room.document_id: room.last_update_id for room in rooms}
            )
        except Exception:
            log.exception("catch-up of %d documents failed", len(rooms))
            return
        for room in rooms:
            if room.document_id in found and not room.closed:
                await room._apply_rows(*found[room.document_id])

    # --- persistence: the rooms of this process flush together, one transaction per tick ---

    def request_flush(self, room: Room) -> None:
        self._dirty.add(room)
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_forever())

    async def _flush_forever(self) -> None:
        while self._dirty:
            await asyncio.sleep(settings.DOCUMENT_FLUSH_DELAY)
            rooms, self._dirty = list(self._dirty), set()
            if not await self.flush_rooms(rooms):
                await asyncio.sleep(1.0)  # the database is unavailable: retry, keep the updates

    async def flush_rooms(self, rooms: list[Room]) -> bool:
        """Write the pending updates of ``rooms`` in one transaction, then acknowledge them."""
        async with self._flush_lock:
            batches = [(room, batch) for room in rooms if (batch := room._take_batch())]
            if not batches:
                return True
            try:
                results = await database(documents.append_document_updates_many)(
                    [batch.request for _, batch in batches]
                )
            except Exception:
                log.exception("could not persist the updates of %d documents", len(batches))
                for room, batch in batches:
                    room._restore_batch(batch)
                    if not room.closed:
                        self._dirty.add(room)
                return False
            for room, batch in batches:
                await room._after_flush(batch, results.get(room.document_id))
            return True

    def _lock(self, document_id: int) -> asyncio.Lock:
        return self._locks.setdefault(document_id, asyncio.Lock())

    async def join(self, document_id: int, peer: Peer) -> Room:
        async with self._lock(document_id):
            room = self.rooms.get(document_id)
            if room is None:
                room = Room(self, document_id)
                await self.relay.subscribe(document_id)
                await room.load()
                self.rooms[document_id] = room
                self._start_ticker()
            await room.join(peer)
            return room

    async def unload(self, room: Room) -> None:
        async with self._lock(room.document_id):
            if room.peers or self.rooms.get(room.document_id) is not room:
                return
            del self.rooms[room.document_id]
            await self.relay.unsubscribe(room.document_id)
            await room.close()

    async def close(self) -> None:
        for room in list(self.rooms.values()):
            room.peers.clear()
            await self.unload(room)
        for task in (self._ticker, self._flusher):
            if task is not None:
                task.cancel()
        await self.relay.close()

    # Called by the relay and by in-process publishers.
    async def deliver_update(self, document_id: int, update: bytes) -> None:
        room = self.rooms.get(document_id)
        if room is not None:
            await room.apply_remote(update)

    async def deliver_awareness(self, document_id: int, update: bytes) -> None:
        room = self.rooms.get(document_id)
        if room is not None:
            await room.apply_remote_awareness(update)


_managers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, RoomManager] = (
    weakref.WeakKeyDictionary()
)


def get_manager() -> RoomManager:
    """The room manager of the running event loop (one per web process; one per test)."""
    loop = asyncio.get_running_loop()
    manager = _managers.get(loop)
    if manager is None:
        manager = _managers[loop] = RoomManager()
        relay.register_local_manager(loop, manager)
    return manager
