from __future__ import annotations

from django.urls import path

from collab.realtime import consumers, document_consumer

websocket_urlpatterns = [
    path("ws/tasks/<int:task_id>/chat", consumers.TaskChatConsumer.as_asgi()),
    path("ws/tasks/<int:task_id>/doc", document_consumer.DocumentConsumer.as_asgi()),
]
