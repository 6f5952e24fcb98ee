"""Small Python y-websocket clients for tests: a pycrdt Doc synced with the server, speaking the
same frames as the npm y-websocket client. ``YClient`` runs over a Channels
WebsocketCommunicator (in-process), ``LiveYClient`` over a real socket (``websockets``)."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

from channels.testing import WebsocketCommunicator
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from collab.lib import ytext
from collab.realtime import yprotocol


def token_headers(token: str) -> list[tuple[bytes, bytes]]:
    return [(b"authorization", f"Bearer {token}".encode())]


def parse_state_vector(payload: bytes) -> dict[int, int]:
    reader = yprotocol._Reader(payload)
    return {reader.var_uint(): reader.var_uint() for _ in range(reader.var_uint())}


class _Closed(Exception):
    pass


class YPeer:
    def __init__(self) -> None:
        self.doc, self.text = ytext.new_doc()
        self._updates: list[bytes] = []
        self.doc.observe(lambda event: self._updates.append(event.update))
        self.server_state: dict[int, int] = {}
        self.denied: list[str] = []
        self.awareness: dict[int, str] = {}
        self.received: list[bytes] = []
        self.closed_with: int | None = None

    # transport
    async def send(self, frame: bytes) -> None:
        raise NotImplementedError

    async def _next(self, timeout: float) -> bytes:
        """The next binary frame; raises TimeoutError, or _Closed after recording the code."""
        raise NotImplementedError

    # behaviour
    async def edit(self, change: Any) -> None:
        """Run ``change(text)`` on the local replica and send the resulting update."""
        self._updates = []
        with self.doc.transaction():
            change(self.text)
        for update in self._updates:
            await self.send(yprotocol.sync_update(update))

    async def insert(self, index: int, value: str) -> None:
        current = str(self.text)
        await self.edit(lambda text: text.insert(ytext.utf8_offset(current, index), value))

    async def set_awareness(self, clock: int, state: str) -> None:
        entry = yprotocol.AwarenessEntry(self.doc.client_id, clock, state)
        await self.send(yprotocol.awareness(yprotocol.encode_awareness_update([entry])))

    @property
    def value(self) -> str:
        return str(self.text)

    @property
    def acknowledged(self) -> bool:
        mine = parse_state_vector(self.doc.get_state()).get(self.doc.client_id, 0)
        return self.server_state.get(self.doc.client_id, 0) >= mine

    async def handle(self, data: bytes) -> None:
        self.received.append(data)
        reader = yprotocol._Reader(data)
        kind = reader.var_uint()
        if kind == yprotocol.MESSAGE_SYNC:
            step = reader.var_uint()
            payload = reader.var_bytes()
            if step == yprotocol.SYNC_STEP1:
                self.server_state = parse_state_vector(payload)
                await self.send(yprotocol.sync_step2(self.doc.get_update(payload)))
            else:
                self.doc.apply_update(payload)
        elif kind == yprotocol.MESSAGE_AWARENESS:
            for entry in yprotocol.parse_awareness_update(reader.var_bytes()):
                self.awareness[entry.client_id] = entry.state_json
        elif kind == yprotocol.MESSAGE_AUTH:
            reader.var_uint()
            self.denied.append(reader.var_string())

    async def pump(self, seconds: float = 0.05) -> None:
        """Handle every frame that arrives within ``seconds`` of the previous one."""
        while True:
            try:
                data = await self._next(seconds)
            except (TimeoutError, _Closed):
                return
            await self.handle(data)

    async def wait_for(self, predicate: Any, timeout: float = 5.0) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while not predicate():
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError("condition not met in time")
            try:
                data = await self._next(remaining)
            except TimeoutError:
                continue
            except _Closed:
                if predicate():
                    return
                raise AssertionError(f"socket closed with {self.closed_with}") from None
            await self.handle(data)


class YClient(YPeer):
    def __init__(self, application: Any, task_id: int, headers: list[tuple[bytes, bytes]]):
        super().__init__()
        self.communicator = WebsocketCommunicator(
            application, f"/ws/tasks/{task_id}/doc", headers=headers
        )

    async def connect(self) -> bool:
        connected, _ = await self.communicator.connect()
        if connected:
            await self.send(yprotocol.sync_step1(self.doc.get_state()))
        return bool(connected)

    async def send(self, frame: bytes) -> None:
        await self.communicator.send_to(bytes_data=frame)

    async def _next(self, timeout: float) -> bytes:
        # Not receive_output(): its timeout cancels the application under test.
        if self.communicator.future.done() and self.communicator.output_queue.empty():
            self.communicator.future.result()
            raise TimeoutError
        frame = await asyncio.wait_for(self.communicator.output_queue.get(), timeout)
        if frame["type"] == "websocket.close":
            self.closed_with = frame.get("code")
            raise _Closed
        return bytes(frame["bytes"])

    async def close(self) -> None:
        await self.communicator.disconnect()


class LiveYClient(YPeer):
    def __init__(self, url: str, token: str) -> None:
        super().__init__()
        self.url = url
        self.token = token
        self.socket: ClientConnection | None = None

    async def connect(self) -> bool:
        try:
            self.socket = await connect(
                self.url,
                additional_headers={"Authorization": f"Bearer {self.token}"},
                max_size=None,
            )
        except InvalidStatus:
            return False
        await self.send(yprotocol.sync_step1(self.doc.get_state()))
        return True

    async def send(self, frame: bytes) -> None:
        assert self.socket is not None
        with contextlib.suppress(ConnectionClosed):
            await self.socket.send(frame)

    async def _next(self, timeout: float) -> bytes:
        assert self.socket is not None
        try:
            message = await asyncio.wait_for(self.socket.recv(), timeout)
        except ConnectionClosed as exc:
            self.closed_with = exc.rcvd.code if exc.rcvd else 1006
            raise _Closed from None
        return message if isinstance(message, bytes) else message.encode()

    async def close(self) -> None:
        if self.socket is not None:
            await self.socket.close()
