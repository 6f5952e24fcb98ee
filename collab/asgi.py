"""ASGI entry point: Django pages over HTTP, Channels consumers over WebSocket."""

from __future__ import annotations

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")
django_asgi_app = get_asgi_application()

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402

from collab.realtime.auth import WebSocketAuthStack  # noqa: E402
from collab.realtime.routing import websocket_urlpatterns  # noqa: E402

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": WebSocketAuthStack(URLRouter(websocket_urlpatterns)),
    }
)
