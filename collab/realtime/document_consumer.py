"""``/ws/tasks/<id>/doc``: the task document over the standard y-websocket protocol.

Thin: the handshake is authenticated by ``auth.py`` (session + Origin, or Bearer token) and
authorised here through ``get_task_access`` (outsiders are refused before the socket opens);
every frame is size-checked and parsed strictly before the room sees it; the room does the rest.
Frames, acknowledgements and close codes are documented in docs/protocol.md "Document".
"""

from __future__ import annotations

import contextlib
import logging
from dataclasses import dataclass
from typing import Any

from channels.db import database_sync_to_async
from channels.exceptions import StopConsumer
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from collab.realtime import access, yprotocol
from collab.realtime.awareness import AWARENESS_MAX_BYTES
from collab.realtime.consumers import CloseCode
from collab.realtime.rooms import Room, get_manager
from collab.tasks.models import Document
from collab.tasks.selectors import TaskAccess, get_task_access
from collab.workspaces.selectors import AnyUser

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _Access:
    access: TaskAccess
    document_id: int
    label: str
    display_name: str


def _document_access(user: AnyUser, task_id: int) -> _Access:
    access = get_task_access(user, task_id)
    document, _ = Document.objects.only("id").get_or_create(task=access.task)
    full_name = getattr(user, "get_full_name", lambda: "")()
    username = user.get_username()
    return _Access(access, document.pk, username, str(full_name or username))


class DocumentConsumer(AsyncWebsocketConsumer):
    # Rooms fan out to their sockets directly; these sockets need no channel-layer inbox.
    channel_layer_alias = "collab.no-layer"

    room: Room | None = None
    user_id: int | None = None
    label = ""
    display_name = ""  # shown in presence (awareness.display_name), from the account
    role = ""
    can_edit = False

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        # With no channel layer, Channels' loop (await_many_dispatch) still wraps every ASGI
        # message in a new task and an asyncio.wait: per frame, two more turns of the event
        # loop. These sockets read their one source directly (bench/README.md "Live
        # documents": where an edit's CPU goes).
        self.scope = scope
        self.channel_layer = None
        self.base_send = send
        with contextlib.suppress(StopConsumer):
            while True:
                await self.dispatch(await receive())

    async def dispatch(self, message: dict[str, Any]) -> None:
        # Channels' dispatch runs close_old_connections() through the ORM's single database
        # thread before every message: a keystroke would queue behind every flush. Frames use
        # no database connection here (rooms manage theirs), so they skip that housekeeping.
        if message["type"] == "websocket.receive":
            await self.websocket_receive(message)
            return
        await super().dispatch(message)

    async def connect(self) -> None:
        user = self.scope.get("user") or AnonymousUser()
        self.task_id = int(self.scope["url_route"]["kwargs"]["task_id"])
        try:
            found = await database_sync_to_async(_document_access)(user, self.task_id)
        except Http404:
            await self.close(code=CloseCode.NOT_FOUND)
            return
        self.user_id = found.access.membership.user_id
        self.label = found.label
        self.display_name = found.display_name
        self.role = found.access.membership.role
        self.can_edit = found.access.can_edit
        self.workspace_id = found.access.task.workspace_id
        self.access_key = access.key_for(
            self.scope, user_id=found.access.membership.user_id, workspace_id=self.workspace_id
        )
        await self.accept()
        self.room = await get_manager().join(found.document_id, self)
        # Removal, demotion, a revoked token, deactivation, logout: applied to this socket
        # within DOCUMENT_ROLE_REFRESH_SECONDS even if it never sends a frame.
        access.get_watcher().watch(self, found.access.membership.role)

    async def disconnect(self, code: int) -> None:
        access.get_watcher().unwatch(self)
        if self.room is not None:
            room, self.room = self.room, None
            await room.leave(self)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if self.room is None:
            return
        if text_data is not None:
            await self._reject(CloseCode.INVALID_FRAME, "text frames are not part of the protocol")
            return
        frame = bytes_data or b""
        if len(frame) > settings.DOCUMENT_MAX_FRAME_BYTES:
            await self._reject(CloseCode.FRAME_TOO_LARGE, f"frame of {len(frame)} bytes")
            return
        try:
            message = yprotocol.parse_message(frame)
        except yprotocol.ProtocolError as exc:
            await self._reject(CloseCode.INVALID_FRAME, str(exc))
            return
        if isinstance(message, yprotocol.AwarenessMessage) and len(frame) > AWARENESS_MAX_BYTES:
            await self._reject(CloseCode.FRAME_TOO_LARGE, f"awareness of {len(frame)} bytes")
            return
        try:
            await self.room.receive(self, message)
        except yprotocol.ProtocolError as exc:  # an update the document must not take
            await self._reject(CloseCode.INVALID_FRAME, str(exc))

    async def send_bytes(self, data: bytes) -> None:
        await self.base_send({"type": "websocket.send", "bytes": data})

    async def close_socket(self, code: int) -> None:
        """The room cannot serve this socket any more (it missed a message it needed)."""
        self.room = None
        await self.close(code=code)

    async def _reject(self, code: int, reason: str) -> None:
        log.warning("closing document socket of %s (%s): %s", self.label, code, reason)
        access.get_watcher().unwatch(self)
        room, self.room = self.room, None
        # The close frame goes first: leaving the room shares this socket's departure with the
        # others (and across processes through Redis), which can fail; the socket must be
        # closed with its code whatever happens there, and is sent nothing after it.
        try:
            await self.close(code=code)
        finally:
            if room is not None:
                await room.leave(self)

    async def access_changed(self, role: str | None) -> None:
        """Told by the access watcher: ``None`` closes the socket (4403), a role applies at once
        (a demoted editor's next update is refused)."""
        if role is None:
            if self.room is not None:
                await self._reject(CloseCode.FORBIDDEN, "access ended")
            return
        self.role = role
        self.can_edit = access.can_edit(role)
