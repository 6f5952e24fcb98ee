"""``/mcp``: the MCP server over streamable HTTP, inside the project's ASGI application.

Daphne does not run the ASGI lifespan protocol, and the SDK's session manager must be running
before it serves a request. We run the SDK **stateless**, with a session manager entered per
request (docs/adr/0021-mcp-under-daphne.md): every POST carries its own JSON-RPC exchange, JSON
responses, no server-side session to lose when a request lands on another web process. The
bearer token is throttled per address like the JSON API's before the SDK's own bearer
middleware checks it (agents.mcp.server.CollabTokenVerifier).
"""

from __future__ import annotations

import functools
import io
import json
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.handlers.asgi import ASGIRequest
from mcp.server.mcpserver import MCPServer
from mcp.server.transport_security import TransportSecuritySettings

from agents.mcp.server import build_server
from collab.accounts import throttle

PATH = "/mcp"


def _security() -> TransportSecuritySettings:
    hosts = [str(h) for h in settings.ALLOWED_HOSTS]
    if "*" in hosts:
        return TransportSecuritySettings(enable_dns_rebinding_protection=False)
    names = [h.lstrip(".") for h in hosts]
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[*names, *(f"{h}:*" for h in names)],
        allowed_origins=[
            f"{s}://{h}{p}" for s in ("http", "https") for h in names for p in ("", ":*")
        ],
    )


def _bearer(scope: dict[str, Any]) -> str | None:
    for key, value in scope.get("headers", []):
        if key == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() if scheme.lower() == "bearer" else None
    return None


def _throttle(scope: dict[str, Any], token: str) -> None:
    request = ASGIRequest(scope, io.BytesIO())  # headers and address only: no body read
    throttle.authenticate_token(request, token)


async def _send_json(send: Any, status: int, body: dict[str, Any]) -> None:
    payload = json.dumps(body).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(payload)),
            ],
        }
    )
    await send({"type": "http.response.body", "body": payload})


@functools.lru_cache(maxsize=16)
def _server(base_url: str) -> MCPServer:
    return build_server(base_url=base_url)


async def mcp_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The ASGI application for ``/mcp`` (collab/asgi.py routes the path here)."""
    token = _bearer(scope)
    if token:
        try:
            await sync_to_async(_throttle, thread_sensitive=True)(scope, token)
        except throttle.TooManyAttempts as exc:
            await _send_json(send, 429, {"detail": str(exc)})
            return
    scheme = "https" if scope.get("scheme") == "https" else "http"
    host = dict(scope.get("headers", [])).get(b"host", b"127.0.0.1").decode("latin-1")
    server = _server(f"{scheme}://{host}")
    app = server.streamable_http_app(
        streamable_http_path=PATH,
        stateless_http=True,
        json_response=True,
        transport_security=_security(),
    )
    manager = server.session_manager  # the one this app serves (no await since it was made)
    async with manager.run():
        await app(scope, receive, send)
