from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.contrib.auth.models import User

from collab.accounts.services import create_api_token
from collab.realtime.rooms import get_manager
from collab.tasks.models import Task
from tests.realtime.yclient import YClient, token_headers


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
    await manager.close()


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
