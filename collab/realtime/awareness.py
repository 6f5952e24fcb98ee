"""Presence (y-protocols awareness) of one document room: who owns which Yjs client id, the
validation of every state a socket sends, and the expiry of other processes' entries.

Browsers render awareness states: y-codemirror.next writes ``user.color`` into a ``style``
attribute and ``user.name`` into the caret label, and the editor's co-editors list shows both.
So the server keeps only the fields Collab's editor shows (``clean_state``): what says who the
peer is (``user.name``, ``user.color``, ``user.kind``, ``user.role``) is set by the server from
the socket's account, whatever the client sent (a viewer could otherwise show up as someone
else, or as an agent), the name without control or bidirectional-control characters; a cursor
is two Yjs relative positions; everything else is dropped, and ``collab`` is stamped too. A
socket speaks for at most ``MAX_CLIENTS_PER_SOCKET`` Yjs client ids. See docs/protocol.md
"Presence".
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, Protocol

from collab.lib.colors import presence_color
from collab.lib.text import displayable
from collab.realtime.yprotocol import AwarenessEntry

# How long another process's awareness entry lives without a renewal (y-protocols uses 30 s).
REMOTE_AWARENESS_TIMEOUT = 30.0
NAME_MAX_CHARS = 64
MAX_CLIENTS_PER_SOCKET = 8
# An awareness message from a socket larger than this closes it with 4413 (a real one is a
# few hundred bytes; a viewer once broadcast 5 x 0.9 MB).
AWARENESS_MAX_BYTES = 16 * 1024

_CONTROL = re.compile(r"[\x00-\x1f\x7f\ud800-\udfff]")
_ROLES = {"owner", "editor", "viewer"}


class Speaker(Protocol):
    """What awareness needs of a socket."""

    user_id: int | None
    label: str  # the username
    display_name: str  # what people see: the account's full name, else its username
    role: str  # the workspace role
    can_edit: bool


def _int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**53


def _clean_id(value: Any) -> dict[str, int] | None:
    if isinstance(value, dict) and _int(value.get("client")) and _int(value.get("clock")):
        return {"client": value["client"], "clock": value["clock"]}
    return None


def _clean_position(value: Any) -> dict[str, Any] | None:
    """A Yjs ``RelativePosition`` as JSON (``Y.relativePositionToJSON``), or ``None``.

    Always all four fields, ``None`` when unused: y-codemirror.next hands a remote cursor to
    ``Y.createAbsolutePositionFromRelativePosition`` unparsed, which tests ``item !== null``,
    so a position without ``item`` (a cursor at the end of the text) crashed its
    remote-selection plugin on every other page (#19.2)."""
    if not isinstance(value, dict) or not set(value) <= {"type", "tname", "item", "assoc"}:
        return None
    position: dict[str, Any] = {"type": None, "tname": None, "item": None}
    for name in ("type", "item"):
        if value.get(name) is not None:
            cleaned = _clean_id(value[name])
            if cleaned is None:
                return None
            position[name] = cleaned
    tname = value.get("tname")
    if tname is not None:
        if not isinstance(tname, str) or len(tname) > 64 or _CONTROL.search(tname):
            return None
        position["tname"] = tname
    assoc = value.get("assoc", 0)
    if not isinstance(assoc, int) or isinstance(assoc, bool) or not -(2**31) <= assoc < 2**31:
        return None
    position["assoc"] = assoc
    return position


def display_name(speaker: Speaker) -> str:
    """The name a socket's presence shows: its account's, never one the client sent."""
    return displayable(speaker.display_name)[:NAME_MAX_CHARS] or speaker.label


def clean_state(state: dict[str, Any], speaker: Speaker) -> dict[str, Any]:
    """The fields of a socket's awareness state that browsers may render, each checked, plus
    what the server vouches for (``collab``)."""
    cleaned: dict[str, Any] = {}
    if isinstance(state.get("user"), dict):
        # Who this is comes from the account: the client's own "user" fields are ignored.
        color = presence_color(f"user:{speaker.user_id}")
        role = speaker.role if speaker.role in _ROLES else None
        cleaned["user"] = {
            "name": display_name(speaker),
            "color": color,
            "colorLight": color + "33",
            "kind": "person",  # agents are published by the server, never by a socket
            "role": role or ("editor" if speaker.can_edit else "viewer"),
        }
    cursor = state.get("cursor")
    if isinstance(cursor, dict):
        anchor, head = _clean_position(cursor.get("anchor")), _clean_position(cursor.get("head"))
        if anchor is not None and head is not None:
            cleaned["cursor"] = {"anchor": anchor, "head": head}
    cleaned["collab"] = {"username": speaker.label, "can_edit": speaker.can_edit}
    return cleaned


def verified(entry: AwarenessEntry, speaker: Speaker) -> AwarenessEntry:
    """``entry`` with its state cleaned and stamped (see ``clean_state``)."""
    state = json.loads(entry.state_json)
    cleaned = clean_state(state if isinstance(state, dict) else {}, speaker)
    return AwarenessEntry(entry.client_id, entry.clock, json.dumps(cleaned, separators=(",", ":")))


class Awareness:
    """The awareness states of one room, and who may change which."""

    def __init__(self) -> None:
        self.entries: dict[int, AwarenessEntry] = {}
        self._owner: dict[int, Speaker] = {}  # client id -> the socket that introduced it
        self._clients: dict[object, set[int]] = {}  # socket -> its client ids
        # socket -> the client id its first entry spoke for: its page's own (y-websocket sends
        # the page's own state first, on open)
        self._first: dict[object, int] = {}
        self._remote_seen: dict[int, float] = {}
        # Clock at which other processes' entries were cleared (late echoes are refused).
        self._removed_clock: dict[int, int] = {}
        # The clock last sent to this room's sockets for each client id (``stamped``).
        self._sent_clock: dict[int, int] = {}

    def states(self) -> list[AwarenessEntry]:
        return list(self.entries.values())

    def receive(
        self, speaker: Speaker, entries: tuple[AwarenessEntry, ...]
    ) -> list[AwarenessEntry]:
        """Apply a socket's awareness update; returns what was accepted (cleaned), to share."""
        mine = self._clients.setdefault(speaker, set())
        if entries:
            self._first.setdefault(speaker, entries[0].client_id)
        accepted = []
        for entry in entries:
            client_id = entry.client_id
            owner = self._owner.get(client_id)
            if owner is not None and owner is not speaker:
                if owner.user_id is None or owner.user_id != speaker.user_id:
                    continue  # a socket speaks only for its own Yjs clients
                if self._first.get(speaker) != client_id:
                    # The same person's other tab echoing this page's state (y-websocket
                    # re-sends every change it receives): taking it over would make the two
                    # tabs hand it back and forth, a thousand messages a second.
                    continue
                # The same person's page on a new socket (a reconnect whose old socket has
                # not closed yet): the new socket takes its client id over, so the old one's
                # leaving does not clear the page's presence.
                self._clients.get(owner, set()).discard(client_id)
                self._owner[client_id] = speaker
                mine.add(client_id)
            if entry.removed and client_id not in mine:
                # A page echoing someone else's departure (y-websocket re-sends every change,
                # removals too). Shared on, one clock higher, every other page echoed it back:
                # an agent's departure went round the room a thousand times a second.
                continue
            if client_id in self._remote_seen:
                # Another process's (or an agent's) entry, echoed back: y-websocket clients
                # re-send every awareness change they receive. Its owner renews and clears it.
                continue
            if entry.clock <= self._removed_clock.get(client_id, -1) and not entry.removed:
                continue  # a late echo of a state that has since been cleared
            current = self.entries.get(client_id)
            if current is not None and entry.clock < current.clock:
                continue
            if entry.removed:
                self.entries.pop(client_id, None)
                self._owner.pop(client_id, None)
                mine.discard(client_id)
            else:
                if client_id not in mine and len(mine) >= MAX_CLIENTS_PER_SOCKET:
                    continue
                entry = verified(entry, speaker)
                self.entries[client_id] = entry
                self._owner[client_id] = speaker
                mine.add(client_id)
            accepted.append(entry)
        return accepted

    def stamped(
        self, entries: list[AwarenessEntry], *, snapshot: bool = False
    ) -> list[AwarenessEntry]:
        """``entries`` as this room sends them to its sockets: each client id's clock strictly
        above the last one the room sent for it.

        y-protocols takes a state only with a clock above the one it holds. A page that loses
        its socket raises the clock of everyone else's state as it clears them, and the room
        raises a leaving socket's clock as it clears it; so on a reconnect the page's own state
        (sent with the clock it had) and everyone else's (sent back with theirs) were refused on
        both sides, and presence showed nobody for up to 30 s, until each renewal overtook the
        clocks. The room is the hub of every socket it serves, so its own clock per client id
        orders what its sockets see; the sender's echo keeps the sender's clock (a higher one
        would replace the page's own local state with the server's copy). A ``snapshot`` (for a
        socket that joins) goes two above: the page cleared those states itself, one above the
        last clock it got."""
        step = 2 if snapshot else 1
        out = []
        for entry in entries:
            clock = max(entry.clock, self._sent_clock.get(entry.client_id, -1) + step)
            self._sent_clock[entry.client_id] = clock
            out.append(AwarenessEntry(entry.client_id, clock, entry.state_json))
        return out

    def receive_remote(self, entries: tuple[AwarenessEntry, ...]) -> list[AwarenessEntry]:
        """Apply entries from another process or an agent (through the relay)."""
        accepted = []
        now = time.monotonic()
        for entry in entries:
            if entry.client_id in self._owner:
                continue
            current = self.entries.get(entry.client_id)
            if current is not None and entry.clock < current.clock:
                continue
            if entry.removed:
                self.entries.pop(entry.client_id, None)
                self._remote_seen.pop(entry.client_id, None)
                self._removed_clock[entry.client_id] = entry.clock
            else:
                self.entries[entry.client_id] = entry
                self._remote_seen[entry.client_id] = now
            accepted.append(entry)
        return accepted

    def forget(self, speaker: Speaker) -> list[AwarenessEntry]:
        """A socket left: clear its entries; returns the removals to share."""
        gone = []
        self._first.pop(speaker, None)
        for client_id in self._clients.pop(speaker, set()):
            entry = self.entries.pop(client_id, None)
            self._owner.pop(client_id, None)
            if entry is not None:
                gone.append(AwarenessEntry(client_id, entry.clock + 1, "null"))
        return gone

    def expire(self, now: float) -> list[AwarenessEntry]:
        """Forget other processes' entries not renewed for ``REMOTE_AWARENESS_TIMEOUT``."""
        stale = [
            client_id
            for client_id, seen in self._remote_seen.items()
            if now - seen > REMOTE_AWARENESS_TIMEOUT
        ]
        gone = []
        for client_id in stale:
            self._remote_seen.pop(client_id, None)
            entry = self.entries.pop(client_id, None)
            if entry is not None:
                gone.append(AwarenessEntry(client_id, entry.clock + 1, "null"))
                self._removed_clock[client_id] = entry.clock + 1
        return gone
