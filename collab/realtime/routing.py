from __future__ import annotations

from django.urls import path

from collab.realtime import consumers

websocket_urlpatterns = [
    path("ws/tasks/<int:task_id>/chat", consumers.TaskChatConsumer.as_asgi()),
]
