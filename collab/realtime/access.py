"""Open sockets follow their person's access: removal, a role change, a revoked API token, a
deactivated account and a logout close or downgrade every socket they concern.

Each web process has one ``AccessWatcher`` per event loop. Sockets (chat and document) register
with it, naming who they are and how they authenticated (``AccessKey``). The watcher

* is **told** of changes: the services that change access publish ``broadcast.access_changed``
  on commit, which reaches the watcher of every web process through the channel layer (one
  channel per process, in the group ``groups.ACCESS_GROUP``), and re-checks that person's
  sockets at once, whether or not they ever send anything;
* **re-checks** every socket it watches every ``DOCUMENT_ROLE_REFRESH_SECONDS`` in one batch of
  three queries, whatever the number of sockets, so a change nobody published (an admin's edit
  of the database) or a lost event still applies within that interval.

A socket whose access is gone is closed with 4403; one whose role changed is told the new role
(an editor demoted to viewer stops being able to write at once). See docs/protocol.md.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import import_module
from typing import Any, Protocol

from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.sessions.models import Session
from django.db import connection
from django.utils import timezone

from collab.accounts.models import ApiToken
from collab.realtime.groups import ACCESS_GROUP
from collab.workspaces.models import Membership, Role

log = logging.getLogger(__name__)

TOKEN = "token"  # noqa: S105 - a kind of credential, not a secret
SESSION = "session"
_DB_SESSIONS = "django.contrib.sessions.backends.db"
# channels-redis forgets group members after a day: the watcher joins again this often.
_REJOIN_SECONDS = 3600.0


@dataclass(frozen=True)
class AccessKey:
    """Who a socket is, where, and by which credential (an API token's hash or a session key)."""

    user_id: int
    workspace_id: int
    kind: str  # TOKEN or SESSION
    credential: str


def key_for(scope: dict[str, Any], *, user_id: int, workspace_id: int) -> AccessKey:
    """The access key of a socket's handshake (see ``auth.BearerTokenMiddleware``)."""
    if scope.get("auth_method") == "token":
        return AccessKey(user_id, workspace_id, TOKEN, str(scope.get("api_token_hash", "")))
    session = scope.get("session")
    session_key = getattr(session, "session_key", None) or ""
    return AccessKey(user_id, workspace_id, SESSION, session_key)


def current_roles(keys: Iterable[AccessKey]) -> dict[AccessKey, str | None]:
    """The role each key still grants (``None``: no access any more), in three queries: the
    memberships of active users, the tokens not revoked, the sessions not ended."""
    keys = list(dict.fromkeys(keys))
    if not keys:
        return {}
    roles = {
        (user_id, workspace_id): role
        for user_id, workspace_id, role in Membership.objects.filter(
            user_id__in={key.user_id for key in keys},
            workspace_id__in={key.workspace_id for key in keys},
            user__is_active=True,
        ).values_list("user_id", "workspace_id", "role")
    }
    hashes = {key.credential for key in keys if key.kind == TOKEN and key.credential}
    tokens = set(
        ApiToken.objects.filter(token_hash__in=hashes, revoked_at=None).values_list(
            "token_hash", "user_id"
        )
    )
    sessions = _live_sessions({key.credential for key in keys if key.kind == SESSION})
    result: dict[AccessKey, str | None] = {}
    for key in keys:
        if key.kind == TOKEN:
            valid = (key.credential, key.user_id) in tokens
        else:
            valid = key.credential in sessions
        result[key] = roles.get((key.user_id, key.workspace_id)) if valid else None
    return result


def _live_sessions(session_keys: set[str]) -> set[str]:
    session_keys.discard("")
    if not session_keys:
        return set()
    if settings.SESSION_ENGINE == _DB_SESSIONS:
        return set(
            Session.objects.filter(
                session_key__in=session_keys, expire_date__gt=timezone.now()
            ).values_list("session_key", flat=True)
        )
    # another session engine: ask it, key by key
    store = import_module(settings.SESSION_ENGINE).SessionStore
    return {key for key in session_keys if store().exists(key)}


def can_edit(role: str | None) -> bool:
    return role in (Role.OWNER, Role.EDITOR)


class Watched(Protocol):
    """A socket that follows its person's access."""

    access_key: AccessKey

    async def access_changed(self, role: str | None) -> None:
        """``None``: access ended (close with 4403); otherwise the current role."""


def _check(keys: list[AccessKey]) -> dict[AccessKey, str | None]:
    try:
        return current_roles(keys)
    finally:
        connection.close()  # called from a worker thread: do not keep its connection


class AccessWatcher:
    def __init__(self) -> None:
        self.sockets: dict[Watched, str | None] = {}  # socket -> role it was last told
        self._ticker: asyncio.Task[None] | None = None
        self._listener: asyncio.Task[None] | None = None
        self._checking = asyncio.Lock()

    def watch(self, socket: Watched, role: str | None) -> None:
        self.sockets[socket] = role
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.create_task(self._tick_forever())
        if self._listener is None or self._listener.done():
            self._listener = asyncio.create_task(self._listen_forever())

    def unwatch(self, socket: Watched) -> None:
        self.sockets.pop(socket, None)

    async def check(
        self, *, user_id: int | None = None, ended_sessions: Iterable[str] = ()
    ) -> None:
        """Re-check the sockets of ``user_id`` (every socket when ``None``) and tell those
        whose access changed; sockets of an ``ended_sessions`` key lose access outright."""
        ended = set(ended_sessions)
        async with self._checking:
            sockets = [
                socket
                for socket in self.sockets
                if user_id is None or socket.access_key.user_id == user_id
            ]
            if not sockets:
                return
            try:
                roles = await sync_to_async(_check, thread_sensitive=False)(
                    [socket.access_key for socket in sockets]
                )
            except Exception:
                log.exception("could not re-check the access of %d sockets", len(sockets))
                return
            for socket in sockets:
                key = socket.access_key
                role = None if key.kind == SESSION and key.credential in ended else roles[key]
                if socket in self.sockets and self.sockets[socket] != role:
                    self.sockets[socket] = role
                    if role is None:
                        self.sockets.pop(socket, None)
                    try:
                        await socket.access_changed(role)
                    except Exception:
                        log.exception("could not apply an access change to a socket")

    async def _tick_forever(self) -> None:
        while self.sockets:
            await asyncio.sleep(max(0.05, settings.DOCUMENT_ROLE_REFRESH_SECONDS))
            await self.check()

    async def _listen_forever(self) -> None:
        """Access changes published by any process (``broadcast.access_changed``)."""
        layer = get_channel_layer()
        if layer is None:  # pragma: no cover - settings always configure a layer
            return
        channel = ""
        joined: float | None = None
        while self.sockets:
            try:
                if not channel:
                    # The default prefix: channels-redis reads every "specific." channel of a
                    # process from one list, so consumers' receives deliver ours too (another
                    # prefix waits behind an idle consumer's receive for ever).
                    channel = await layer.new_channel()
                if joined is None or time.monotonic() - joined > _REJOIN_SECONDS:
                    await layer.group_add(ACCESS_GROUP, channel)
                    joined = time.monotonic()
                event = await layer.receive(channel)
            except asyncio.CancelledError:
                raise
            except Exception:
                # Redis away: the periodic check still applies changes; join again after.
                log.warning("access-change listener failed; retrying", exc_info=True)
                joined = None
                await asyncio.sleep(1.0)
                continue
            if event.get("type") == "access.changed":
                user_id = event.get("user_id")
                await self.check(
                    user_id=user_id if isinstance(user_id, int) else None,
                    ended_sessions=[str(key) for key in event.get("ended_sessions", [])],
                )
        if channel:
            with contextlib.suppress(Exception):
                await layer.group_discard(ACCESS_GROUP, channel)

    async def close(self) -> None:
        self.sockets.clear()
        for task in (self._ticker, self._listener):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task


_watchers: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AccessWatcher] = (
    weakref.WeakKeyDictionary()
)


def get_watcher() -> AccessWatcher:
    """The access watcher of the running event loop (one per web process; one per test)."""
    loop = asyncio.get_running_loop()
    watcher = _watchers.get(loop)
    if watcher is None:
        watcher = _watchers[loop] = AccessWatcher()
    return watcher
