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
import contextlib
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

from collab.lib import ytext, yupdate
from collab.realtime import fanout, relay, yprotocol
from collab.realtime.awareness import Awareness
from collab.realtime.yprotocol import AwarenessEntry
from collab.tasks import documents

log = logging.getLogger(__name__)

T = TypeVar("T")

# Closing a socket that could not be sent what it needs to sync: clients reconnect and resync.
CLOSE_CANNOT_SYNC = 1011


def too_large_reason() -> str:
    return (
        f"document too large: documents are limited to {settings.DOCUMENT_MAX_BYTES:,} bytes;"
        " this change was not saved"
    )


# A document whose batch failed on its own (not the database) is retried after this pause.
FAILED_FLUSH_RETRY_SECONDS = 1.0

# Updates from other processes held back until what they follow arrives (see Room.apply_remote);
# beyond this many the oldest is dropped (it is in the update log: the next load has it).
MAX_HELD_UPDATES = 1000


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
    display_name: str
    role: str
    can_edit: bool

    async def send_bytes(self, data: bytes) -> None: ...

    async def close_socket(self, code: int) -> None: ...


@dataclass
class _PeerState:
    last_sent: float = field(default_factory=time.monotonic)
    last_ack: float = float("-inf")
    ack_later: asyncio.TimerHandle | None = None  # a deferred acknowledgement (ack_interval)


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
        self.awareness = Awareness()
        self.pending: list[_Pending] = []
        self.last_update_id = 0
        self.last_flushed_text: str | None = None
        self.text_dirty = False
        # People's edits not in a version yet (monotonic times): the first one and the latest.
        # A version is recorded once typing pauses for DOCUMENT_VERSION_PAUSE_SECONDS, or after
        # DOCUMENT_VERSION_INTERVAL of typing without a pause (version_if_paused, every tick).
        self.unversioned_since: float | None = None
        self.typed_at: float | None = None
        self.closed = False
        self._unload_task: asyncio.Task[None] | None = None
        self._compacting = False
        self._compaction: asyncio.Task[None] | None = None
        # An upper bound of the size of the document's Yjs state (exact after a measurement,
        # then plus every applied update): the size limit is checked against it.
        self.state_bytes = 0
        # Where a cut would split a surrogate pair (from every change applied), and updates
        # from elsewhere that start past the document's clock, held until it catches up.
        self.boundaries = yupdate.Boundaries()
        self.held: list[bytes] = []
        # The state vector of the latest committed batch: what acknowledgements carry.
        self.durable_state: bytes | None = None
        # What this turn of the event loop will send the sockets (collab/realtime/fanout.py):
        # updates in order, awareness by Yjs client id (the latest state wins).
        self._out_updates: list[fanout.OutgoingUpdate] = []
        self._out_presence: dict[int, fanout.OutgoingPresence] = {}
        self._broadcast_due = False

    # --- lifecycle ---------------------------------------------------------------------------

    async def load(self) -> None:
        loaded = await database(documents.load_document)(document_id=self.document_id)
        self._apply(loaded.state, index=False)
        if yupdate.has_astral(str(self.text)):
            # Read in Python, a large state takes a while: not on the event loop. (No text
            # outside the Basic Multilingual Plane, no surrogate pair to cut.)
            self.boundaries = await asyncio.to_thread(yupdate.Boundaries.of, loaded.state)
        self.state_bytes = len(self.doc.get_update())
        self.last_update_id = loaded.last_update_id
        self.last_flushed_text = loaded.text

    async def join(self, peer: Peer) -> None:
        self.peers[peer] = _PeerState()
        if self._unload_task is not None:
            self._unload_task.cancel()
            self._unload_task = None
        await self._send(peer, yprotocol.sync_step1(self.doc.get_state()))
        if self.awareness.entries:
            update = yprotocol.encode_awareness_update(
                self.awareness.stamped(self.awareness.states(), snapshot=True)
            )
            await self._send(peer, yprotocol.awareness(update))

    async def leave(self, peer: Peer) -> None:
        state = self.peers.pop(peer, None)
        if state is not None and state.ack_later is not None:
            state.ack_later.cancel()
        gone = self.awareness.forget(peer)
        if gone:
            self._share_awareness(gone)
        if not self.peers:
            self.unload_when_idle()

    def unload_when_idle(self) -> None:
        """Unload after ``DOCUMENT_ROOM_IDLE_SECONDS`` unless a socket joins meanwhile."""
        if self._unload_task is None or self._unload_task.done():
            self._unload_task = asyncio.create_task(self._unload_later())

    async def _unload_later(self) -> None:
        await asyncio.sleep(settings.DOCUMENT_ROOM_IDLE_SECONDS)
        self._unload_task = None
        await self.manager.unload(self)

    @property
    def unsaved(self) -> bool:
        return bool(self.pending) or self.text_dirty

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
            update = yprotocol.encode_awareness_update(
                self.awareness.stamped(self.awareness.states(), snapshot=True)
            )
            await self._send(peer, yprotocol.awareness(update))

    async def _receive_sync(self, peer: Peer, message: yprotocol.SyncMessage) -> None:
        if message.step == yprotocol.SYNC_STEP1:
            await self._send_missing(peer, message.payload)
            return
        if message.payload == yprotocol.EMPTY_UPDATE:
            return
        if not peer.can_edit:
            await self._send(
                peer, yprotocol.permission_denied("read-only: viewers cannot change the document")
            )
            return
        if self._too_large(message.payload):
            log.warning(
                "refused an update of %s bytes to document %s (%s): over DOCUMENT_MAX_BYTES",
                len(message.payload),
                self.document_id,
                peer.label,
            )
            await self._send(peer, yprotocol.permission_denied(too_large_reason()))
            return
        verdict = self._verdict(message.payload)
        if verdict is yupdate.Verdict.SPLITS_PAIR:
            # The socket is closed (4400) by its consumer; nothing was applied, relayed or logged.
            raise yprotocol.ProtocolError(f"the update {verdict.value}")
        if verdict is yupdate.Verdict.GAP:
            # It follows structs this document never took (a refused update, or ones still on
            # their way from another process): applied, yrs would show its text and log none
            # of it. A Yjs client sends them again in its answer to the next sync step 1.
            log.info(
                "dropped an update to document %s from %s: it %s",
                self.document_id,
                peer.label,
                verdict.value,
            )
            return
        changes = self._apply(message.payload)
        if self.held:
            await self._apply_held()
        if not changes:
            return
        update = changes[0] if len(changes) == 1 else merge_updates(*changes)
        self._queue_update(fanout.OutgoingUpdate(update, author=peer, relay=True))
        self.pending.append(_Pending(update, peer, peer.user_id, peer.label))
        self.typed_at = time.monotonic()
        if self.unversioned_since is None:
            self.unversioned_since = self.typed_at
        self._schedule_flush()

    async def _receive_awareness(self, peer: Peer, entries: tuple[AwarenessEntry, ...]) -> None:
        if peer not in self.peers:
            return
        # Echoed to the sender too, as y-websocket's server does: it keeps the socket alive
        # (with the sender's own clocks: see Awareness.stamped).
        for entry in self.awareness.receive(peer, entries):
            self._queue_presence(fanout.OutgoingPresence(entry, origin=peer, relay=True))

    def _share_awareness(self, entries: list[AwarenessEntry]) -> None:
        for entry in entries:
            self._queue_presence(fanout.OutgoingPresence(entry, origin=None, relay=False))

    # --- what the sockets are sent, once per turn of the event loop (fanout.py) -------------

    def _queue_update(self, item: fanout.OutgoingUpdate) -> None:
        self._out_updates.append(item)
        self._broadcast_soon()

    def _queue_presence(self, item: fanout.OutgoingPresence) -> None:
        self._out_presence.pop(item.entry.client_id, None)  # keeps the order of arrival
        self._out_presence[item.entry.client_id] = item
        self._broadcast_soon()

    def _broadcast_soon(self) -> None:
        if not self._broadcast_due:
            self._broadcast_due = True
            self.manager.schedule_broadcast(self)

    async def broadcast(self) -> None:
        """Send what this turn changed: updates first (a cursor names their items), then
        presence; publish this process's part to the relay."""
        self._broadcast_due = False
        updates, self._out_updates = self._out_updates, []
        presence, self._out_presence = self._out_presence, {}
        cap = min(fanout.MERGE_MAX_BYTES, settings.WEBSOCKET_MAX_MESSAGE_BYTES - 16)
        for chunk in fanout.chunks(updates, cap) if updates else ():
            await self._broadcast_updates(chunk)
        if presence:
            await self._broadcast_presence(list(presence.values()))

    async def _broadcast_updates(self, chunk: list[fanout.OutgoingUpdate]) -> None:
        everyone = fanout.merged([item.update for item in chunk])
        own = [item.update for item in chunk if item.relay]
        if own:
            relayed = everyone if len(own) == len(chunk) else fanout.merged(own)
            self.manager.relay.publish_update(self.document_id, relayed)
        authors = {item.author for item in chunk if item.author is not None}
        frame = yprotocol.sync_update(everyone)
        for peer in list(self.peers):
            if peer not in authors:
                await self._send(peer, frame)
                continue
            others = [item.update for item in chunk if item.author is not peer]
            if others:
                await self._send(peer, yprotocol.sync_update(fanout.merged(others)))

    async def _broadcast_presence(self, items: list[fanout.OutgoingPresence]) -> None:
        own = [item.entry for item in items if item.relay]
        if own:
            self.manager.relay.publish_awareness(
                self.document_id, yprotocol.encode_awareness_update(own)
            )
        stamped = self.awareness.stamped([item.entry for item in items])
        origins = {item.origin for item in items if item.origin is not None}
        frame = yprotocol.awareness(yprotocol.encode_awareness_update(stamped))
        for peer in list(self.peers):
            if peer not in origins:
                await self._send(peer, frame)
                continue
            # The sender's own entries keep its clocks (see Awareness.stamped).
            mine = [
                item.entry if item.origin is peer else entry
                for item, entry in zip(items, stamped, strict=True)
            ]
            await self._send(peer, yprotocol.awareness(yprotocol.encode_awareness_update(mine)))

    # --- updates from elsewhere (relay, services, the log) -----------------------------------

    async def apply_remote(self, update: bytes) -> bool:
        """Apply an update persisted (or being persisted) by someone else; True if it changed
        anything. It is sent to every local socket and the text column is rewritten.

        One that starts past the document's clock for a client (the relay dropped or reordered
        what it follows; rows of the log committed out of order) is held, and applied once
        what it follows has arrived: applied at once, yrs would put it in the text without
        emitting it, and the text column would show what the room's state does not hold."""
        if self._remote_verdict(update) is yupdate.Verdict.GAP:
            self.held.append(update)
            if len(self.held) > MAX_HELD_UPDATES:
                del self.held[0]
                log.warning("document %s: dropped its oldest held update", self.document_id)
            return False
        changed = await self._apply_remote_now(update)
        if changed and self.held:
            await self._apply_held()
        return changed

    async def _apply_remote_now(self, update: bytes) -> bool:
        changes = self._apply(update)
        if not changes:
            return False
        merged = changes[0] if len(changes) == 1 else merge_updates(*changes)
        self._queue_update(fanout.OutgoingUpdate(merged, author=None, relay=False))
        self.text_dirty = True
        self._schedule_flush()
        return True

    async def _apply_held(self) -> None:
        """Apply the held updates that no longer start past the document's clock."""
        progress = True
        while progress and self.held:
            progress = False
            for update in list(self.held):
                if self._remote_verdict(update) is not yupdate.Verdict.GAP:
                    self.held.remove(update)
                    await self._apply_remote_now(update)
                    progress = True

    async def apply_remote_awareness(self, update: bytes) -> None:
        try:
            entries = yprotocol.parse_awareness_update(update)
        except yprotocol.ProtocolError:
            return
        accepted = self.awareness.receive_remote(entries)
        if accepted:
            self._share_awareness(accepted)

    async def apply_rows(self, snapshot: bytes | None, rows: list[tuple[int, bytes]]) -> None:
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

    def take_batch(self) -> _Batch | None:
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

    def restore_batch(self, batch: _Batch) -> None:
        self.pending[:0] = batch.items
        self.text_dirty = True

    async def after_flush(self, batch: _Batch, result: documents.AppendResult | None) -> None:
        if result is None:  # the document was deleted: nothing more to write
            log.warning("document %s no longer exists; dropping its room", self.document_id)
            return
        self.last_flushed_text = batch.text
        self.last_update_id = max(self.last_update_id, result.last_update_id)
        self.durable_state = batch.state_vector
        acked = {item.peer for item in batch.items if item.peer is not None}
        ack = yprotocol.sync_step1(batch.state_vector)
        interval = settings.DOCUMENT_ACK_INTERVAL
        now = time.monotonic()
        for peer in acked:
            state = self.peers.get(peer)
            if state is None or state.ack_later is not None:
                continue  # gone, or already due an acknowledgement (it will carry this batch)
            due = state.last_ack + interval
            if now >= due:
                state.last_ack = now
                await self._send(peer, ack)
            else:
                state.ack_later = asyncio.get_running_loop().call_later(
                    due - now, self._ack_later, peer
                )
        if result.snapshot or result.missed:
            await self.apply_rows(result.snapshot, result.missed)
        if result.should_compact and not self._compacting:
            self._compacting = True
            self._compaction = asyncio.create_task(self._compact())

    def _ack_later(self, peer: Peer) -> None:
        state = self.peers.get(peer)
        if state is None or self.durable_state is None:
            return
        state.ack_later = None
        state.last_ack = time.monotonic()
        self.manager.spawn(self._send(peer, yprotocol.sync_step1(self.durable_state)))

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

    def _apply(self, update: bytes, *, index: bool = True) -> list[bytes]:
        self._changes = []
        self.doc.apply_update(update)
        changes, self._changes = self._changes, []
        self.state_bytes += sum(len(change) for change in changes)
        for change in changes if index else ():
            try:
                self.boundaries.add(yupdate.decode(change))
            except yupdate.UpdateError:
                log.exception("document %s: cannot read a change yrs emitted", self.document_id)
        return changes

    def _verdict(self, update: bytes) -> yupdate.Verdict:
        """May ``update`` be applied here (see collab/lib/yupdate.py)?"""
        try:
            decoded = yupdate.decode(update)
        except yupdate.UpdateError as exc:
            raise yprotocol.ProtocolError(f"update cannot be decoded: {exc}") from None
        state = yprotocol.decode_state_vector(self.doc.get_state())
        return yupdate.check(decoded, state, self.boundaries)

    def _remote_verdict(self, update: bytes) -> yupdate.Verdict:
        """The same for an update from the log or another process: one that cannot be read
        here (none can: each was emitted by yrs) is applied as before."""
        try:
            return self._verdict(update)
        except yprotocol.ProtocolError:
            log.exception("document %s: cannot read an update from elsewhere", self.document_id)
            return yupdate.Verdict.GOOD

    def _too_large(self, update: bytes) -> bool:
        """Would applying ``update`` take the document over ``DOCUMENT_MAX_BYTES``? Measured
        exactly (one encoding of the state) only when the running upper bound says it might."""
        limit = settings.DOCUMENT_MAX_BYTES
        if self.state_bytes + len(update) <= limit:
            return False
        self.state_bytes = len(self.doc.get_update())
        return self.state_bytes + len(update) > limit

    async def _send_missing(self, peer: Peer, state_vector: bytes) -> None:
        """Answer a sync step 1: what the client lacks, as one sync step 2, or, when that would
        be over the largest message the server can send, as one update per Yjs client (each
        with the delete set) followed by a step 2 with the last part, so the client only
        reports "synced" when it has everything."""
        update = self.doc.get_update(state_vector)
        limit = settings.WEBSOCKET_MAX_MESSAGE_BYTES - 16
        if len(update) <= limit:
            await self._send(peer, yprotocol.sync_step2(update))
            return
        parts = yprotocol.missing_by_client(self.doc, state_vector)
        too_big = [len(part) for part in parts if len(part) > limit]
        if too_big:
            # Only a document from before the size limit can get here.
            log.error(
                "document %s cannot be sent to %s: a part of %s bytes is over the %s-byte limit",
                self.document_id,
                peer.label,
                max(too_big),
                limit,
            )
            await self._drop(peer)
            return
        for part in parts[:-1]:
            await self._send(peer, yprotocol.sync_update(part))
        await self._send(peer, yprotocol.sync_step2(parts[-1]))

    async def _send(self, peer: Peer, data: bytes) -> None:
        state = self.peers.get(peer)
        if state is not None:
            state.last_sent = time.monotonic()
        try:
            await peer.send_bytes(data)
        except Exception:
            if state is None:
                return  # the socket had already left the room: nothing is lost
            # The socket missed a message it needed (too large for the server, or the
            # connection broke): close it, so its client reconnects and resyncs, rather than
            # waiting for ever for what never came.
            log.warning(
                "could not send %s bytes to %s on document %s; closing the socket",
                len(data),
                peer.label,
                self.document_id,
                exc_info=True,
            )
            await self._drop(peer)

    async def _drop(self, peer: Peer) -> None:
        """Take ``peer`` out of the room and close its socket (its client reconnects)."""
        await self.leave(peer)
        with contextlib.suppress(Exception):
            await peer.close_socket(CLOSE_CANNOT_SYNC)

    async def version_if_paused(self, now: float) -> None:
        """Record a version of what people typed here once they pause (or have typed for
        DOCUMENT_VERSION_INTERVAL without one), after it is flushed; the store records nothing
        if nobody changed the text since the latest version (another process got there)."""
        if self.unversioned_since is None or self.typed_at is None or self.unsaved:
            return
        paused = now - self.typed_at >= settings.DOCUMENT_VERSION_PAUSE_SECONDS
        if not paused and now - self.unversioned_since < settings.DOCUMENT_VERSION_INTERVAL:
            return
        self.unversioned_since = self.typed_at = None
        try:
            await database(documents.checkpoint_document)(
                document_id=self.document_id, text=str(self.text)
            )
        except Exception:
            log.exception("could not record a version of document %s", self.document_id)

    async def tick(self, now: float, keepalive: float) -> None:
        """Keep quiet sockets alive; forget other processes' awareness entries gone stale;
        record a version when typing pauses."""
        await self.version_if_paused(now)
        quiet = [peer for peer, state in self.peers.items() if now - state.last_sent >= keepalive]
        if quiet:
            ping = yprotocol.sync_step1(self.doc.get_state())
            for peer in quiet:
                await self._send(peer, ping)
        gone = self.awareness.expire(now)
        if gone:
            self._share_awareness(gone)


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
        self._flush_requests = 0  # counts request_flush calls: the debounce sees new updates
        self._flush_lock = asyncio.Lock()
        # Rooms whose last batch failed on its own: retried after a pause, without holding up
        # the flushes of the other rooms.
        self._retry: set[Room] = set()
        self._retrier: asyncio.Task[None] | None = None
        self._ticker: asyncio.Task[None] | None = None
        self._closing = False
        self._tasks: set[asyncio.Future[None]] = set()
        # Rooms with something to send this turn, and the task that sends it (one per turn).
        self._broadcasting: list[Room] = []
        self._broadcast_due = False

    def spawn(self, work: Awaitable[None]) -> None:
        """Run ``work`` on the loop, keeping a reference until it ends."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def schedule_broadcast(self, room: Room) -> None:
        """Have ``room`` send what it queued once the frames of this turn of the event loop
        are all applied: a task created now runs on the loop's next turn, after every
        consumer woken by this turn's reads (collab/realtime/fanout.py)."""
        self._broadcasting.append(room)
        if not self._broadcast_due:
            self._broadcast_due = True
            self.spawn(self._broadcast())

    async def _broadcast(self) -> None:
        rooms, self._broadcasting = self._broadcasting, []
        self._broadcast_due = False
        for room in rooms:
            try:
                await room.broadcast()
            except Exception:
                log.exception("could not send the changes of document %s", room.document_id)

    # --- one ticker per process: keep-alive of every socket, catch-up of every room ---------

    def _start_ticker(self) -> None:
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.create_task(self._tick_forever())

    async def _tick_forever(self) -> None:
        keepalive = settings.DOCUMENT_KEEPALIVE_SECONDS
        catchup = settings.DOCUMENT_CATCHUP_SECONDS
        pause = settings.DOCUMENT_VERSION_PAUSE_SECONDS
        tick = max(0.05, min(keepalive / 3, catchup / 3, pause / 2, 2.0))
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
                await room.apply_rows(*found[room.document_id])

    # --- persistence: the rooms of this process flush together, one transaction per tick ---

    def request_flush(self, room: Room) -> None:
        self._dirty.add(room)
        self._flush_requests += 1
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_forever())

    async def _wait_for_batch(self) -> None:
        """Until no update has come for DOCUMENT_FLUSH_DELAY, or DOCUMENT_FLUSH_MAX_WAIT has
        passed since the first pending one: one person typing is acknowledged after the short
        pause; a busy process writes one transaction per max wait, not one per pause."""
        deadline = time.monotonic() + settings.DOCUMENT_FLUSH_MAX_WAIT
        while True:
            seen = self._flush_requests
            left = deadline - time.monotonic()
            await asyncio.sleep(max(0.0, min(settings.DOCUMENT_FLUSH_DELAY, left)))
            if self._flush_requests == seen or time.monotonic() >= deadline:
                return

    async def _flush_forever(self) -> None:
        while self._dirty:
            await self._wait_for_batch()
            rooms, self._dirty = list(self._dirty), set()
            if not await self.flush_rooms(rooms):
                await asyncio.sleep(1.0)  # the database is unavailable: retry, keep the updates

    def _schedule_retry(self) -> None:
        if self._retrier is None or self._retrier.done():
            self._retrier = asyncio.create_task(self._retry_later())

    async def _retry_later(self) -> None:
        await asyncio.sleep(FAILED_FLUSH_RETRY_SECONDS)
        rooms, self._retry = list(self._retry), set()
        for room in rooms:
            if not room.closed:
                self.request_flush(room)

    async def flush_rooms(self, rooms: list[Room]) -> bool:
        """Write the pending updates of ``rooms`` in one transaction, then acknowledge them."""
        async with self._flush_lock:
            batches = [(room, batch) for room in rooms if (batch := room.take_batch())]
            if not batches:
                return True
            try:
                results = await database(documents.append_document_updates_many)(
                    [batch.request for _, batch in batches]
                )
            except Exception:
                log.exception("could not persist the updates of %d documents", len(batches))
                for room, batch in batches:
                    room.restore_batch(batch)
                    if not room.closed:
                        self._dirty.add(room)
                return False
            failed = False
            for room, batch in batches:
                result = results.get(room.document_id)
                if isinstance(result, documents.AppendFailure):
                    # Only this document's batch was rolled back: keep it, retry it later;
                    # the other rooms of the flush are acknowledged below as usual.
                    failed = True
                    room.restore_batch(batch)
                    if not room.closed:
                        self._retry.add(room)
                else:
                    await room.after_flush(batch, result)
                    # One batch can hold a hundred rooms: let frames that came meanwhile
                    # through between their acknowledgements (the p99 of a keystroke).
                    await asyncio.sleep(0)
            if failed:
                self._schedule_retry()
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
            await room.flush()
            if room.unsaved and not self._closing:
                # Its batch could not be written: the room is the only copy of those edits.
                log.error("document %s has unsaved edits; keeping its room", room.document_id)
                room.unload_when_idle()
                return
            del self.rooms[room.document_id]
            await self.relay.unsubscribe(room.document_id)
            await room.close()

    async def close(self) -> None:
        self._closing = True
        for room in list(self.rooms.values()):
            room.peers.clear()
            await self.unload(room)
        for task in (self._ticker, self._flusher, self._retrier):
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
