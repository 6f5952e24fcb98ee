"""Plain-dict views of chat messages, shared by the JSON API and the WebSocket events."""

from __future__ import annotations

from typing import Any

from collab.tasks.models import Message


def message_event(message: Message) -> dict[str, Any]:
    return {
        "id": message.pk,
        "task_id": message.task_id,
        "kind": message.kind,
        "author": message.author_name,
        "body": message.body,
        "created_at": message.created_at.isoformat(),
    }
