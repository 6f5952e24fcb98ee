"""WebSocket consumers. Thin: authenticate, authorise through selectors, validate every frame,
hand client messages to services. See docs/protocol.md for frames and close codes."""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404
from django.template.loader import render_to_string

from collab.core.hooks import PostedMessage
from collab.realtime import access
from collab.realtime.groups import member_group, task_group
from collab.tasks import services as task_services
from collab.tasks.selectors import TaskAccess, get_task_access
from collab.workspaces.models import Role

log = logging.getLogger(__name__)

# What no database text column holds: NUL, and lone surrogates (JSON's "\ud800" escapes).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


class CloseCode:
    """WebSocket close codes sent by Collab (4000-4999 are for applications)."""

    INVALID_FRAME = 4400  # not JSON, not an object, unknown type or wrong fields
    FORBIDDEN = 4403  # membership ended while connected
    NOT_FOUND = 4404  # outsider or unknown task (handshake refused)
    FRAME_TOO_LARGE = 4413  # a frame over WEBSOCKET_MAX_FRAME_BYTES
    TOO_MANY_ATTEMPTS = 4429  # this address guessed too many tokens (the HTTP API's 429)
    # The channel layer (Redis) is unavailable: reconnect later (HTTP's 503; the standard 1013
    # cannot be sent: autobahn, under Daphne, lets a server send only 1000 and 3000-4999).
    TRY_AGAIN_LATER = 4503


class FrameError(Exception):
    def __init__(self, code: int, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def parse_frame(
    text: str | None, bytes_data: bytes | None, *, allowed: dict[str, set[str]]
) -> dict[str, Any]:
    """Validate one client frame: size, JSON object, known type, expected string fields."""
    raw = text.encode() if text is not None else (bytes_data or b"")
    if len(raw) > settings.WEBSOCKET_MAX_FRAME_BYTES:
        raise FrameError(CloseCode.FRAME_TOO_LARGE, f"frame of {len(raw)} bytes is too large")
    try:
        frame = json.loads(raw)
    except ValueError:
        raise FrameError(CloseCode.INVALID_FRAME, "frame is not valid JSON") from None
    except RecursionError:  # JSON nested deeper than Python's parser goes: not our schema
        raise FrameError(CloseCode.INVALID_FRAME, "frame is nested too deeply") from None
    if not isinstance(frame, dict):
        raise FrameError(CloseCode.INVALID_FRAME, "frame is not a JSON object")
    kind = frame.get("type")
    if not isinstance(kind, str) or kind not in allowed:
        raise FrameError(CloseCode.INVALID_FRAME, f"unknown frame type {kind!r}")
    for field in allowed[kind]:
        if not isinstance(frame.get(field), str):
            raise FrameError(CloseCode.INVALID_FRAME, f"{kind} needs a string {field!r}")
    return frame


class TaskChatConsumer(AsyncWebsocketConsumer):
    """``/ws/tasks/<id>/chat``: live chat and task events (see docs/protocol.md).

    Browsers (htmx ws extension) get HTML fragments with out-of-band swaps; clients that
    connect with ``?format=json`` get JSON events.
    """

    FRAMES: dict[str, set[str]] = {"chat.message": {"body"}, "ping": set()}

    access: TaskAccess
    as_json: bool
    joined: list[str]
    connected = False
    layer_down = False  # a receive from the channel layer (Redis) failed

    # Channels assigns the channel layer's receive for this socket's channel here, and awaits
    # what the attribute gives. Redis away, that receive raises at once, and the exception
    # ended the consumer: before the handshake was accepted, that was an HTTP 500 (issue 28);
    # after it, a close with 1011. Instead, the first failure is one ``layer.unavailable``
    # event (the socket is closed with 4503, "try again later"), and then it waits.
    @property
    def channel_receive(self) -> Callable[[], Awaitable[dict[str, Any]]]:
        return self._receive_from_layer

    @channel_receive.setter
    def channel_receive(self, receive: Callable[[], Awaitable[dict[str, Any]]]) -> None:
        self._layer_receive = receive

    async def _receive_from_layer(self) -> dict[str, Any]:
        if not self.layer_down:
            try:
                return await self._layer_receive()
            except Exception:
                log.warning("chat socket: the channel layer is unavailable", exc_info=True)
                self.layer_down = True
                return {"type": "layer.unavailable"}
        await asyncio.Event().wait()  # until the socket closes (Channels cancels this)
        raise AssertionError("unreachable")

    async def layer_unavailable(self, event: dict[str, Any]) -> None:
        if self.connected:
            await self._close(CloseCode.TRY_AGAIN_LATER, "try again later")
        # else connect() sees layer_down and does the same once the handshake is accepted

    async def connect(self) -> None:
        self.joined = []
        user = self.scope.get("user")
        task_id = int(self.scope["url_route"]["kwargs"]["task_id"])
        try:
            self.access = await database_sync_to_async(get_task_access)(user, task_id)
        except Http404:
            await self.close(code=CloseCode.NOT_FOUND)
            return
        query = parse_qs(self.scope.get("query_string", b"").decode("latin-1"))
        self.as_json = "json" in query.get("format", [])
        # The role the page was rendered with (?role=editor): if it is no longer the person's
        # role (changed while this page's socket was away), say so at once. Only a known role
        # counts; anything else is ignored, and without it nothing extra is sent.
        rendered = query.get("role", [None])[-1]
        membership = self.access.membership
        try:
            if self.layer_down:
                raise ConnectionError("the channel layer is unavailable")
            for group in (
                task_group(task_id),
                member_group(membership.workspace_id, membership.user_id),
            ):
                await self.channel_layer.group_add(group, self.channel_name)
                self.joined.append(group)
        except Exception:
            # Redis is away: without its groups this socket would be sent nothing. Rather
            # than a failed handshake (HTTP 500), the client gets 4503 ("try again later"):
            # the task page shows "reconnecting" and reconnects with a growing pause.
            log.warning(
                "chat socket of %s on task %s: the channel layer is unavailable; closing with %s",
                user,
                task_id,
                CloseCode.TRY_AGAIN_LATER,
                exc_info=True,
            )
            self.joined = []  # nothing to leave (that would fail the same way)
            await self.accept()
            await self._close(CloseCode.TRY_AGAIN_LATER, "try again later")
            return
        self.access_key = access.key_for(
            self.scope, user_id=membership.user_id, workspace_id=membership.workspace_id
        )
        await self.accept()
        self.connected = True
        access.get_watcher().watch(self, membership.role)
        if rendered in Role.values and rendered != membership.role:
            await self.access_changed(membership.role)

    async def disconnect(self, code: int) -> None:
        access.get_watcher().unwatch(self)
        try:
            await self._leave_groups()
        except Exception:  # Redis away: its group memberships expire on their own
            log.warning("could not leave the groups of a chat socket", exc_info=True)

    async def _leave_groups(self) -> None:
        for group in getattr(self, "joined", []):
            await self.channel_layer.group_discard(group, self.channel_name)
        self.joined = []

    async def _close(self, code: int, reason: str) -> None:
        """Close from our side, once: the access watcher and a membership event can both end
        the same socket, and the second must not send a second close frame.

        The close frame goes first, before anything that awaits the channel layer: a
        ``group_discard`` that fails or waits (Redis away, a cancelled receive) must not keep
        the documented code from the client. Otherwise the consumer crashes (the client sees
        1011 and reconnects, to a refused handshake) or never closes at all. Nothing is sent
        after the close frame (``send``), and leaving the groups is retried at disconnect."""
        if getattr(self, "closed_by_server", False):
            return
        self.closed_by_server = True
        access.get_watcher().unwatch(self)
        await self.close(code=code, reason=reason)
        try:
            await self._leave_groups()
        except Exception:
            log.warning("could not leave the groups of a closed chat socket", exc_info=True)

    async def send(
        self, text_data: str | None = None, bytes_data: bytes | None = None, close: bool = False
    ) -> None:
        """Nothing follows our close frame (events still queued for this socket are dropped)."""
        if getattr(self, "closed_by_server", False):
            return
        await super().send(text_data=text_data, bytes_data=bytes_data, close=close)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        try:
            frame = parse_frame(text_data, bytes_data, allowed=self.FRAMES)
        except FrameError as exc:
            log.warning(
                "closing chat socket of %s on task %s with %s: %s",
                self.scope.get("user"),
                self.access.task.pk,
                exc.code,
                exc.reason,
            )
            await self._close(exc.code, exc.reason)
            return
        if frame["type"] == "ping":
            await self.send(text_data=json.dumps({"type": "pong"}))
            return
        if _UNSTORABLE.search(frame["body"]):
            await self._send_error(
                "invalid",
                "The message contains a character that cannot be stored"
                " (a NUL or half of a surrogate pair).",
            )
            return
        try:
            posted = await database_sync_to_async(self._post)(frame["body"])
        except ValidationError as exc:
            await self._send_error("invalid", " ".join(exc.messages))
        except PermissionDenied as exc:
            await self._send_error("forbidden", str(exc))
        except Http404:
            await self._close(CloseCode.FORBIDDEN, "no longer a member")
        else:
            if posted.memory_notice:  # what a remember/forget command did: to this socket only
                await self._send_notice(posted.memory_notice, about_memory=posted.about_memory)

    def _post(self, body: str) -> PostedMessage:
        # Re-read membership: a role change or removal applies to open sockets too.
        access = get_task_access(self.scope["user"], self.access.task.pk)
        return task_services.post_message(membership=access.membership, task=access.task, body=body)

    async def _send_notice(self, text: str, *, about_memory: bool) -> None:
        event = {"type": "memory.notice", "text": text}
        context = {"notice": text, "about_memory": about_memory}
        await self._answer(event, "tasks/_chat_notice.html", context)

    async def _send_error(self, code: str, detail: str) -> None:
        event = {"type": "error", "code": code, "detail": detail}
        await self._answer(event, "tasks/_chat_error.html", {"detail": detail})

    async def _answer(self, event: dict[str, Any], template: str, context: dict[str, Any]) -> None:
        """An answer to this socket's own frame: ``event`` for JSON clients, the fragment
        ``template`` renders for browsers."""
        if self.as_json:
            await self.send(text_data=json.dumps(event))
        else:
            await self.send(text_data=render_to_string(template, context))

    # Events from the channel layer (published by collab.realtime.broadcast).

    async def chat_message(self, event: dict[str, Any]) -> None:
        # This person's own version of the message, when it has fields only they may see.
        event = event.get("for_user", {}).get(str(self.access.membership.user_id), event)
        if self.as_json:
            await self.send(text_data=json.dumps({"type": "chat.message", **event["message"]}))
        elif not self.access.can_edit and "html_readonly" in event:
            await self.send(text_data=event["html_readonly"])
        else:
            await self.send(text_data=event["html"])

    async def task_changed(self, event: dict[str, Any]) -> None:
        if self.as_json:
            await self.send(text_data=json.dumps({"type": "task.changed", **event["task"]}))
        else:
            await self.send(text_data=event["html"])

    async def membership_ended(self, event: dict[str, Any]) -> None:
        await self._close(CloseCode.FORBIDDEN, "no longer a member")

    async def access_changed(self, role: str | None) -> None:
        """Told by the access watcher (collab/realtime/access.py): ``None`` closes the socket
        (4403); a new role changes what this socket is sent (viewers get no buttons), and the
        client is told, so that an open page becomes editable (or read-only) without a reload."""
        if role is None:
            await self._close(CloseCode.FORBIDDEN, "access ended")
            return
        self.access.membership.role = role
        can_edit = access.can_edit(role)
        if self.as_json:
            event = {"type": "access.changed", "role": role, "can_edit": can_edit}
            await self.send(text_data=json.dumps(event))
        else:
            context = {"role": role, "can_edit": can_edit, "oob": True}
            await self.send(text_data=render_to_string("tasks/_task_role.html", context))

    async def agent_event(self, event: dict[str, Any]) -> None:
        """Agent turns, streamed replies and cards (built by agents/outbox/events.py)."""
        if self.as_json:
            await self.send(text_data=json.dumps(event["payload"]))
            return
        html = event["html"] if self.access.can_edit else event["html_readonly"]
        if html:
            await self.send(text_data=html)
