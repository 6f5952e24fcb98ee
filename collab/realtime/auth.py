"""WebSocket handshake checks: who is connecting, and from which site.

Browsers authenticate with their session cookie and always send an ``Origin`` header, which
must name one of ``ALLOWED_HOSTS`` (a page on another site cannot ride on the cookie). Other
clients send ``Authorization: Bearer <api token>``; without a cookie session they need no
``Origin``. A handshake that fails either check is refused before the socket opens.
"""

from __future__ import annotations

import asyncio
from typing import Any

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.security.websocket import OriginValidator
from django.conf import settings
from django.contrib.auth.models import AnonymousUser

from collab.accounts.services import authenticate_api_token
from collab.realtime import broadcast

Scope = dict[str, Any]


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


class BearerTokenMiddleware:
    """Sets ``scope["user"]`` from an API token when the handshake carries one."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.cookie_app = AuthMiddlewareStack(_OriginRequired(app))

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> Any:
        broadcast.register_server_loop(asyncio.get_running_loop())
        authorization = _header(scope, b"authorization")
        if authorization is not None:
            scheme, _, token = authorization.partition(" ")
            user = None
            if scheme.lower() == "bearer" and token:
                user = await database_sync_to_async(authenticate_api_token)(token.strip())
            scope = dict(scope, user=user or AnonymousUser(), auth_method="token")
            return await self.app(scope, receive, send)
        return await self.cookie_app(scope, receive, send)


class _OriginRequired(OriginValidator):
    """Cookie sessions need an ``Origin`` header that names one of our hosts."""

    def __init__(self, app: Any) -> None:
        super().__init__(app, settings.ALLOWED_HOSTS)

    def valid_origin(self, parsed_origin: Any) -> bool:
        if parsed_origin is None:
            return False
        return bool(super().valid_origin(parsed_origin))


def WebSocketAuthStack(app: Any) -> BearerTokenMiddleware:
    return BearerTokenMiddleware(app)
