"""What agents post in a task's chat (replies, questions, notices)."""

from __future__ import annotations

from django.conf import settings

from collab.tasks.models import Message
from collab.tasks.services import create_message


def post_agent_message(*, task_id: int, author_name: str, body: str, kind: str) -> Message:
    """An agent's (or a system) message, through the one way a message is stored
    (``create_message``); the caller broadcasts it on commit."""
    body = body.strip()[: settings.CHAT_MESSAGE_MAX_CHARS]
    return create_message(task_id=task_id, kind=kind, body=body, author_name=author_name)
