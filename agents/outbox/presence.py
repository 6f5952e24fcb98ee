"""Agents in the presence list of a task's document while their turn runs.

A running turn gives its agent a Yjs awareness entry, as if the agent were one more editor:
``{"user": {"name", "color", "colorLight", "kind": "agent"}, "collab": {"agent", "turn_id"}}``,
plus ``"cursor"`` (y-codemirror.next's relative positions) at the place the agent is typing. The
entry is published through the document relay (``collab.realtime.relay.publish_awareness``), the
path rooms use for other processes' presence, so every room of the document in every web
process shows it. Rooms forget such entries after 30 s without a renewal, so a running turn
renews it every ``RENEW_SECONDS``, and clears it (state ``null``) when the turn ends; if the
worker dies, the entry disappears by itself. See docs/protocol.md "Agents in the presence list".

Agents have their own stable Yjs client id (``agent_client_id``), derived from the agent id,
so a renewal replaces the entry instead of adding another, in every process and after restarts.
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from collab.lib import ytext
from collab.realtime import relay, yprotocol

log = logging.getLogger(__name__)

RENEW_SECONDS = 10.0  # well inside the rooms' 30 s timeout for other processes' presence

_lock = threading.Lock()
_last_clock = 0


def agent_client_id(agent_id: int) -> int:
    """The agent's Yjs client id: a 32-bit number (like the ones Yjs picks) derived from the
    agent id, the same in every process."""
    digest = hashlib.sha256(f"collab-agent:{agent_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") or 1


def _next_clock() -> int:
    """Awareness clocks only go up: milliseconds since the epoch, at least one more than the
    previous one of this process (a later turn of the same agent always wins)."""
    global _last_clock
    with _lock:
        _last_clock = max(_last_clock + 1, int(time.time() * 1000))
        return _last_clock


@dataclass
class _Shown:
    document_id: int
    client_id: int
    state: dict[str, Any]
    published_at: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


_shown: dict[int, _Shown] = {}  # turn id -> what this process published for it


def agent_state(
    *, name: str, colour: str, agent_id: int, turn_id: int, cursor: dict[str, Any] | None = None
) -> dict[str, Any]:
    state: dict[str, Any] = {
        "user": {
            "name": name,
            "color": colour,
            "colorLight": f"{colour}33",
            "kind": "agent",
            "role": "agent",
        },
        # Set only by the server: a socket's own "collab" field is overwritten by its room.
        "collab": {"agent": name, "agent_id": agent_id, "turn_id": turn_id},
    }
    if cursor is not None:
        state["cursor"] = {"anchor": cursor, "head": cursor}
    return state


def relative_position(
    *, item: dict[str, int] | None = None, tname: str | None = None, assoc: int = 0
) -> dict[str, Any]:
    """A Yjs ``RelativePosition`` as browsers put it in awareness: all four fields, null when
    unused. y-codemirror.next hands a remote cursor straight to
    ``Y.createAbsolutePositionFromRelativePosition``, which tests ``item !== null``: a missing
    ``item`` (yrs' JSON leaves it out) crashed its remote-selection plugin on every page."""
    return {"type": None, "tname": None if item else tname, "item": item, "assoc": assoc}


def _publish(shown: _Shown, state: dict[str, Any] | None) -> None:
    entry = yprotocol.AwarenessEntry(
        shown.client_id,
        _next_clock(),
        "null" if state is None else json.dumps(state, separators=(",", ":")),
    )
    relay.publish_awareness(shown.document_id, yprotocol.encode_awareness_update([entry]))
    shown.published_at = time.monotonic()


def show(
    *,
    turn_id: int,
    agent_id: int,
    name: str,
    colour: str,
    document_id: int | None,
) -> None:
    """The agent starts working on the task whose document is ``document_id`` (None: the task
    has none, so there is no presence list to appear in): it appears in the presence list."""
    if document_id is None:
        return
    state = agent_state(name=name, colour=colour, agent_id=agent_id, turn_id=turn_id)
    shown = _Shown(document_id, agent_client_id(agent_id), state)
    with _lock:
        _shown[turn_id] = shown
    _publish(shown, state)


def renew(turn_id: int, *, force: bool = False) -> None:
    """Called while the turn works: re-publish the entry every ``RENEW_SECONDS``."""
    shown = _shown.get(turn_id)
    if shown is not None and (force or time.monotonic() - shown.published_at >= RENEW_SECONDS):
        _publish(shown, shown.state)


def move_cursor(turn_id: int, *, state: bytes, index: int) -> None:
    """Put the agent's cursor at Python index ``index`` of the text of the Yjs ``state`` (what
    the agent has just written), as a relative position that browsers resolve themselves."""
    shown = _shown.get(turn_id)
    if shown is None:
        return
    try:
        _doc, text = ytext.doc_from_updates(state)
        value = str(text)
        if index >= len(value):
            # The end of the text, as Yjs writes it (yrs cannot make this one).
            cursor = relative_position(tname=ytext.TEXT_NAME)
        else:
            sticky = text.sticky_index(ytext.utf8_offset(value, index)).to_json()
            cursor = relative_position(item=sticky.get("item"), assoc=sticky.get("assoc", 0))
    except BaseException as exc:  # a cursor is a nicety: never let it stop an edit (pyo3
        if isinstance(exc, KeyboardInterrupt | SystemExit):  # panics are BaseExceptions)
            raise
        log.exception("could not place the cursor of turn %s", turn_id)
        return
    shown.state = {**shown.state, "cursor": {"anchor": cursor, "head": cursor}}
    _publish(shown, shown.state)


def hide(turn_id: int) -> None:
    """The turn ended (done, waiting for a person, failed, stopped): the entry is cleared."""
    with _lock:
        shown = _shown.pop(turn_id, None)
    if shown is not None:
        _publish(shown, None)
