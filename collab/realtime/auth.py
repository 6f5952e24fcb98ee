"""WebSocket handshake checks: who is connecting, and from which site.

Browsers authenticate with their session cookie and always send an ``Origin`` header, which
must name one of ``ALLOWED_HOSTS`` (a page on another site cannot ride on the cookie). Other
clients send ``Authorization: Bearer <api token>``; without a cookie session they need no
``Origin``. A handshake that fails either check is refused before the socket opens.

A bad token counts as a failed guess from the client's address, exactly as on the HTTP API
(django-axes, ``collab/accounts/throttle.py``; the address by the ``TRUSTED_PROXIES`` rule of
``collab/lib/addresses.py``). A locked-out address is refused even with a valid token: the
socket is opened and closed at once with 4429 (Daphne cannot answer an upgrade with a status
of our choosing, and a plain refusal would look like a bad token).
"""

from __future__ import annotations

import asyncio
from typing import Any
from urllib.parse import urlsplit

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.security.websocket import OriginValidator, WebsocketDenier
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpRequest

from collab.accounts import throttle
from collab.realtime import broadcast
from collab.realtime.consumers import CloseCode
from collab.workspaces.services import hash_token

Scope = dict[str, Any]


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key.lower() == name:
            return str(value.decode("latin-1"))
    return None


def _request_of(scope: Scope) -> HttpRequest:
    """The handshake as the request django-axes reads: the peer, ``X-Forwarded-For`` (believed
    only from ``TRUSTED_PROXIES``), the user agent and the path."""
    request = HttpRequest()
    client = scope.get("client") or (None, None)
    request.method = "GET"
    request.path = request.path_info = str(scope.get("path", ""))
    request.META = {
        "REMOTE_ADDR": client[0] or "",
        "PATH_INFO": request.path,
        "REQUEST_METHOD": "GET",
        "HTTP_USER_AGENT": _header(scope, b"user-agent") or "",
    }
    forwarded = _header(scope, b"x-forwarded-for")
    if forwarded is not None:
        request.META["HTTP_X_FORWARDED_FOR"] = forwarded
    return request


def _authenticate(scope: Scope, token: str) -> User | None:
    return throttle.authenticate_token(_request_of(scope), token)


async def _refuse_locked_out(receive: Any, send: Any) -> None:
    message = await receive()
    if message.get("type") != "websocket.connect":
        return
    await send({"type": "websocket.accept"})
    await send({"type": "websocket.close", "code": CloseCode.TOO_MANY_ATTEMPTS})


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
                try:
                    user = await database_sync_to_async(_authenticate)(scope, token.strip())
                except throttle.TooManyAttempts:
                    return await _refuse_locked_out(receive, send)
            # The token's hash lets open sockets notice its revocation (realtime/access.py).
            scope = dict(
                scope,
                user=user or AnonymousUser(),
                auth_method="token",
                api_token_hash=hash_token(token.strip()),
            )
            return await self.app(scope, receive, send)
        return await self.cookie_app(scope, receive, send)


_DEFAULT_PORTS = {"http": 80, "https": 443}


def _host_port(host: str, scheme: str) -> tuple[str, int | None]:
    """``("example.com", 8000)`` from ``"example.com:8000"``; the scheme's default port when
    none is written."""
    parsed = urlsplit(f"//{host}")
    try:
        port = parsed.port
    except ValueError:
        return "", None
    return (parsed.hostname or "", port or _DEFAULT_PORTS.get(scheme))


class _OriginRequired(OriginValidator):
    """Cookie sessions need an ``Origin`` header that names this very site: a host in
    ``ALLOWED_HOSTS`` **and** the host and port the handshake was sent to (its ``Host``
    header), or one of ``CSRF_TRUSTED_ORIGINS`` exactly. A page served on another port of the
    same host is another origin and is refused."""

    def __init__(self, app: Any) -> None:
        super().__init__(app, settings.ALLOWED_HOSTS)

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> Any:
        origin = _header(scope, b"origin")
        if origin is not None and self.same_site(urlsplit(origin), _header(scope, b"host")):
            return await self.application(scope, receive, send)
        return await WebsocketDenier()(scope, receive, send)

    def same_site(self, origin: Any, host: str | None) -> bool:
        scheme = origin.scheme
        if scheme not in _DEFAULT_PORTS or not origin.netloc:
            return False
        if f"{scheme}://{origin.netloc}" in getattr(settings, "CSRF_TRUSTED_ORIGINS", []):
            return True
        if not super().valid_origin(origin):  # the host is one of ALLOWED_HOSTS
            return False
        theirs = _host_port(origin.netloc, scheme)
        if host is None:  # no Host header (in-process tests): only the default port
            return theirs[1] == _DEFAULT_PORTS[scheme]
        # The Host header does not say the scheme: its port defaults to the origin's.
        return theirs == _host_port(host, scheme)


def WebSocketAuthStack(app: Any) -> BearerTokenMiddleware:
    return BearerTokenMiddleware(app)
