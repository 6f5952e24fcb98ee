"""ASGI entry point: Django pages over HTTP, Channels consumers over WebSocket."""

from __future__ import annotations

import os
from typing import Any

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from agents.mcp.http import PATH as MCP_PATH  # noqa: E402
from agents.mcp.http import mcp_app  # noqa: E402
from collab.realtime.auth import WebSocketAuthStack  # noqa: E402
from collab.realtime.routing import websocket_urlpatterns  # noqa: E402


async def http_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """``/mcp`` to the MCP server (agents/mcp/http.py), everything else to Django."""
    path = scope.get("path", "")
    if path == MCP_PATH or path.startswith(MCP_PATH + "/"):
        await mcp_app(scope, receive, send)
    else:
        await django_asgi_app(scope, receive, send)


application = ProtocolTypeRouter(
    {
        "http": http_app,
        "websocket": WebSocketAuthStack(URLRouter(websocket_urlpatterns)),
    }
)
