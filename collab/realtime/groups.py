"""The one place where Channels group names are built."""

from __future__ import annotations

from django.conf import settings


def task_group(task_id: int) -> str:
    """Every socket open on a task: chat messages and task changes."""
    return f"task.{task_id}"


def document_relay_channel(document_id: int) -> str:
    """The Redis pub/sub channel relaying a document's Yjs updates between processes."""
    return f"{settings.DOCUMENT_RELAY_PREFIX}:doc.{document_id}"


def document_relay_pattern() -> str:
    return f"{settings.DOCUMENT_RELAY_PREFIX}:doc.*"


def member_group(workspace_id: int, user_id: int) -> str:
    """Every socket of one person in one workspace: told when their membership ends."""
    return f"workspace.{workspace_id}.user.{user_id}"


# Every web process's access watcher (collab/realtime/access.py): told when someone's access
# changes, so that it re-checks their open sockets.
ACCESS_GROUP = "access"
