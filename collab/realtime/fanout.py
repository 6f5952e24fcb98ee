"""What a document room sends its sockets, gathered over one turn of the event loop.

Every socket operation costs a `send` and an `epoll` round in the kernel, which was half of an
edit's CPU (bench/README.md "Live documents"), so a room does not write each update as it
comes: it queues what changed and sends it once the frames read in the same turn of the loop
have all been applied (``Room.broadcast``, scheduled by ``RoomManager.schedule_broadcast``).
Then, as Hocuspocus batches its flushes:

- the updates of the turn are merged into one Yjs update (``merge_updates``), in chunks of at
  most ``MERGE_MAX_BYTES`` so a message never nears the WebSocket message limit, encoded once,
  and the same bytes go to every socket that wrote none of them (a writer gets the others'
  updates merged without its own);
- the relay gets one message per chunk of this process's own updates, not one per update;
- awareness is collapsed to the latest state per Yjs client id, one message per socket.

Nothing is dropped by merging: a merged update holds every struct and deletion of its parts.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pycrdt import merge_updates

from collab.realtime.yprotocol import AwarenessEntry

# Updates are merged while their sizes add up to at most this; a larger one goes alone (as it
# came: the socket's frame limit already bounds it).
MERGE_MAX_BYTES = 64 * 1024


@dataclass(frozen=True)
class OutgoingUpdate:
    update: bytes
    author: object | None  # the socket it came from (not sent back to it), None if elsewhere
    relay: bool  # this process's own: published to the other processes


@dataclass(frozen=True)
class OutgoingPresence:
    entry: AwarenessEntry
    origin: object | None  # the socket that sent it (gets its own clocks back), or None
    relay: bool


def merged(updates: list[bytes]) -> bytes:
    return updates[0] if len(updates) == 1 else merge_updates(*updates)


def chunks(items: Iterable[OutgoingUpdate], cap: int) -> list[list[OutgoingUpdate]]:
    """``items`` in order, cut where the next one would take a chunk over ``cap`` bytes."""
    out: list[list[OutgoingUpdate]] = []
    size = cap + 1
    for item in items:
        if size + len(item.update) > cap:
            out.append([])
            size = 0
        out[-1].append(item)
        size += len(item.update)
    return out
