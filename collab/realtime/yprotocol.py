"""The y-websocket binary protocol (y-protocols sync + awareness + auth), parsed strictly.

Every client frame is one message: a var-uint message type followed by its payload. A frame
that does not parse completely (truncated, trailing bytes, unknown type, awareness state that
is not JSON, update that Yjs cannot decode) raises ``ProtocolError`` before anything touches
the document. See docs/protocol.md "Document".
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from pycrdt import Doc, get_state

MESSAGE_SYNC = 0
MESSAGE_AWARENESS = 1
MESSAGE_AUTH = 2
MESSAGE_QUERY_AWARENESS = 3

SYNC_STEP1 = 0
SYNC_STEP2 = 1
SYNC_UPDATE = 2

AUTH_PERMISSION_DENIED = 0

EMPTY_UPDATE = b"\x00\x00"


class ProtocolError(ValueError):
    pass


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def var_uint(self) -> int:
        value = 0
        shift = 0
        while True:
            if self.pos >= len(self.data):
                raise ProtocolError("truncated var-uint")
            byte = self.data[self.pos]
            self.pos += 1
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
            if shift > 63:
                raise ProtocolError("var-uint too long")

    def var_bytes(self) -> bytes:
        length = self.var_uint()
        end = self.pos + length
        if end > len(self.data):
            raise ProtocolError("truncated byte array")
        chunk = self.data[self.pos : end]
        self.pos = end
        return chunk

    def var_string(self) -> str:
        try:
            return self.var_bytes().decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("string is not UTF-8") from None

    def done(self) -> None:
        if self.pos != len(self.data):
            raise ProtocolError("trailing bytes after the message")


def var_uint(value: int) -> bytes:
    out = bytearray()
    while value > 0x7F:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    out.append(value)
    return bytes(out)


def var_bytes(data: bytes) -> bytes:
    return var_uint(len(data)) + data


def var_string(text: str) -> bytes:
    return var_bytes(text.encode("utf-8"))


@dataclass(frozen=True)
class SyncMessage:
    step: int  # SYNC_STEP1 (payload: state vector), SYNC_STEP2 or SYNC_UPDATE (payload: update)
    payload: bytes


@dataclass(frozen=True)
class AwarenessEntry:
    client_id: int
    clock: int
    state_json: str  # "null" (or empty) means the client left

    @property
    def removed(self) -> bool:
        return self.state_json in ("", "null")


@dataclass(frozen=True)
class AwarenessMessage:
    entries: tuple[AwarenessEntry, ...]


@dataclass(frozen=True)
class QueryAwarenessMessage:
    pass


Message = SyncMessage | AwarenessMessage | QueryAwarenessMessage


def parse_message(frame: bytes) -> Message:
    reader = _Reader(frame)
    kind = reader.var_uint()
    message: Message
    if kind == MESSAGE_SYNC:
        step = reader.var_uint()
        if step not in (SYNC_STEP1, SYNC_STEP2, SYNC_UPDATE):
            raise ProtocolError(f"unknown sync step {step}")
        payload = reader.var_bytes()
        reader.done()
        if step == SYNC_STEP1:
            _check_state_vector(payload)
        elif payload != EMPTY_UPDATE:
            try:
                get_state(payload)  # decodes the whole update without touching any document
            except ValueError:
                raise ProtocolError("update cannot be decoded") from None
        message = SyncMessage(step=step, payload=payload)
    elif kind == MESSAGE_AWARENESS:
        message = AwarenessMessage(entries=parse_awareness_update(reader.var_bytes()))
        reader.done()
    elif kind == MESSAGE_QUERY_AWARENESS:
        reader.done()
        message = QueryAwarenessMessage()
    else:
        raise ProtocolError(f"unknown message type {kind}")
    return message


def _check_state_vector(payload: bytes) -> None:
    reader = _Reader(payload)
    for _ in range(reader.var_uint()):
        reader.var_uint()
        reader.var_uint()
    reader.done()


def parse_awareness_update(update: bytes) -> tuple[AwarenessEntry, ...]:
    reader = _Reader(update)
    count = reader.var_uint()
    if count > 10_000:
        raise ProtocolError("too many awareness entries")
    entries = []
    for _ in range(count):
        client_id = reader.var_uint()
        clock = reader.var_uint()
        state_json = reader.var_string()
        if state_json not in ("", "null"):
            try:
                state: Any = json.loads(state_json)
            except ValueError:
                raise ProtocolError("awareness state is not JSON") from None
            if not isinstance(state, dict):
                raise ProtocolError("awareness state is not a JSON object")
        entries.append(AwarenessEntry(client_id=client_id, clock=clock, state_json=state_json))
    reader.done()
    return tuple(entries)


def decode_state_vector(payload: bytes) -> dict[int, int]:
    reader = _Reader(payload)
    vector = {}
    for _ in range(reader.var_uint()):
        client = reader.var_uint()
        vector[client] = reader.var_uint()
    reader.done()
    return vector


def encode_state_vector(vector: dict[int, int]) -> bytes:
    out = [var_uint(len(vector))]
    for client, clock in vector.items():
        out += [var_uint(client), var_uint(clock)]
    return b"".join(out)


def missing_by_client(doc: Doc, state_vector: bytes) -> list[bytes]:
    """What a peer whose state is ``state_vector`` lacks of ``doc``, as one update per Yjs
    client (each also carries the delete set), for answers too large for one message. Yjs
    applies them in any order: an item whose origin is in a later part waits for it."""
    theirs = decode_state_vector(state_vector)
    ours = decode_state_vector(doc.get_state())
    parts = []
    for client, clock in ours.items():
        if theirs.get(client, 0) >= clock:
            continue
        # "I have every other client's items, and this client's up to where I am."
        vector = dict(ours)
        vector[client] = theirs.get(client, 0)
        parts.append(doc.get_update(encode_state_vector(vector)))
    return parts or [doc.get_update(state_vector)]


def encode_awareness_update(entries: list[AwarenessEntry] | tuple[AwarenessEntry, ...]) -> bytes:
    out = [var_uint(len(entries))]
    for entry in entries:
        out += [var_uint(entry.client_id), var_uint(entry.clock), var_string(entry.state_json)]
    return b"".join(out)


def sync_step1(state_vector: bytes) -> bytes:
    return bytes([MESSAGE_SYNC, SYNC_STEP1]) + var_bytes(state_vector)


def sync_step2(update: bytes) -> bytes:
    return bytes([MESSAGE_SYNC, SYNC_STEP2]) + var_bytes(update)


def sync_update(update: bytes) -> bytes:
    return bytes([MESSAGE_SYNC, SYNC_UPDATE]) + var_bytes(update)


def awareness(update: bytes) -> bytes:
    return bytes([MESSAGE_AWARENESS]) + var_bytes(update)


def permission_denied(reason: str) -> bytes:
    return bytes([MESSAGE_AUTH, AUTH_PERMISSION_DENIED]) + var_string(reason)
