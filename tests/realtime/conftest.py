"""WebSocket test helpers: chat sockets (``open_socket``) and document clients (``connect``)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client

from collab.accounts.services import create_api_token
from collab.asgi import application as asgi_application
from collab.realtime import access
from collab.realtime.rooms import get_manager
from collab.tasks.models import Task
from tests.realtime.yclient import YClient, token_headers


async def bounded(step: Awaitable[Any], seconds: float) -> bool:
    """Run a teardown step for at most ``seconds``; True when it finished in time.

    Not ``asyncio.wait_for``: on a timeout it cancels the step and then *waits for the step to
    end*, and a consumer cancelled inside a channels-redis receive can take that cancellation
    late or swallow it, so a teardown bounded by ``wait_for`` has still hung (production mode,
    two workers, CI). Here a step that does not finish in time is cancelled and left: it dies
    with the test's loop, and the next test gets a fresh channel layer (tests/conftest.py).
    A step's own timeout counts as not finished; any other error is raised.
    """
    task = asyncio.ensure_future(step)
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        task.cancel()
        return False
    with contextlib.suppress(TimeoutError):
        task.result()
        return True
    return False


@pytest.fixture
def application() -> Any:
    """The WebSocket side of collab.asgi (the HTTP side needs collected static files)."""
    from channels.routing import URLRouter

    from collab.realtime.auth import WebSocketAuthStack
    from collab.realtime.routing import websocket_urlpatterns

    return WebSocketAuthStack(URLRouter(websocket_urlpatterns))


@pytest.fixture
async def rooms(transactional_db: None) -> AsyncIterator[Any]:
    """The room manager of this test's event loop, closed (flushed) at the end."""
    manager = get_manager()
    yield manager
    # Bounded, like open_socket's teardown: in production mode, a teardown has waited for ever
    # here (120 s, then pytest-timeout) after a test whose room leave failed; the relay's and
    # the watcher's receives from Redis are what such a close waits on.
    await bounded(manager.close(), TEARDOWN_SECONDS)
    await bounded(access.get_watcher().close(), TEARDOWN_SECONDS)  # see open_socket
    # The database thread of channels keeps its connection (CONN_MAX_AGE); close it so the test
    # database can be dropped.
    await database_sync_to_async(connections.close_all)()


@pytest.fixture
def connect(application: Any, rooms: Any) -> Callable[..., Any]:
    """``await connect(user, task)`` gives a connected YClient authenticated by API token."""

    async def _connect(user: User, task: Task, *, expect: bool = True) -> YClient:
        new = await database_sync_to_async(create_api_token)(user=user, name="test")
        client = YClient(application, task.pk, token_headers(new.token))
        connected = await client.connect()
        assert connected is expect
        if connected:
            await client.wait_for(lambda: bool(client.server_state) or client.received)
        return client

    return _connect


ORIGIN = "http://testserver"

# Generous: the machine running the suite may be busy. Nothing asserts on how long it took.
WAIT = 10
TEARDOWN_SECONDS = 5


def _session_cookie(user: User) -> str:
    client = Client()
    client.force_login(user)
    return f"{settings.SESSION_COOKIE_NAME}={client.cookies[settings.SESSION_COOKIE_NAME].value}"


def _token(user: User) -> str:
    return create_api_token(user=user, name="tests").token


class Socket(WebsocketCommunicator):
    """A communicator that remembers whether the handshake was accepted."""

    accepted: bool
    close_code: int | None

    async def receive_event(self) -> dict[str, Any]:
        event: dict[str, Any] = await self.receive_json_from(timeout=WAIT)
        return event

    async def receive_html(self) -> str:
        return str(await self.receive_from(timeout=WAIT))

    async def receive_close(self) -> int:
        output = await self.receive_output(timeout=WAIT)
        assert output["type"] == "websocket.close", output
        return int(output.get("code", 1000))


OpenSocket = Callable[..., Awaitable[Socket]]


@pytest.fixture
async def open_socket() -> AsyncIterator[OpenSocket]:
    """``await open_socket(alice, task_id)``: a chat socket, by session cookie unless ``token``.

    ``origin=None`` leaves the Origin header out; ``fmt="json"`` asks for JSON events;
    ``role="viewer"`` says the role the page was rendered with (``?role=``).
    """
    sockets: list[Socket] = []

    async def _open(
        user: User | None,
        task_id: int,
        *,
        fmt: str = "html",
        origin: str | None = ORIGIN,
        token: bool = False,
        authorization: str | None = None,
        role: str | None = None,
    ) -> Socket:
        headers: list[tuple[bytes, bytes]] = []
        if origin is not None:
            headers.append((b"origin", origin.encode()))
        if token and user is not None:
            authorization = f"Bearer {await database_sync_to_async(_token)(user)}"
        if authorization is not None:
            headers.append((b"authorization", authorization.encode()))
        if user is not None and not token:
            cookie = await database_sync_to_async(_session_cookie)(user)
            headers.append((b"cookie", cookie.encode()))
        query = (["format=json"] if fmt == "json" else []) + ([f"role={role}"] if role else [])
        path = f"/ws/tasks/{task_id}/chat" + ("?" + "&".join(query) if query else "")
        socket = Socket(asgi_application, path, headers=headers)
        accepted, code = await socket.connect(timeout=WAIT)
        socket.accepted = bool(accepted)
        socket.close_code = None if accepted else code
        sockets.append(socket)
        return socket

    yield _open
    # Teardown is bounded: cancelling a consumer (or the watcher's listener) inside a
    # channels-redis receive has been seen to wait for ever in a test's loop; what is left
    # pending dies with the loop, and the next test gets a fresh channel layer (tests/conftest.py).
    for socket in sockets:
        if not socket.future.done():
            await bounded(socket.disconnect(), TEARDOWN_SECONDS)
    # This loop's access watcher stops its listener: left waiting in a receive, it would keep
    # channels-redis's receive lock bound to this loop.
    await bounded(access.get_watcher().close(), TEARDOWN_SECONDS)
    # No layer.flush() here: with channels-redis it closes the pools of every event loop,
    # including the broadcast publisher's loop in another thread, which fails ("attached to a
    # different loop"). channels-redis closes this loop's pool itself when pytest closes the loop.
