"""The one place where Channels group names are built."""

from __future__ import annotations


def task_group(task_id: int) -> str:
    return f"task.{task_id}"


def document_relay_channel(document_id: int) -> str:
    """The Redis pub/sub channel relaying a document's Yjs updates between processes."""
    from django.conf import settings

    return f"{settings.DOCUMENT_RELAY_PREFIX}:doc.{document_id}"


def document_relay_pattern() -> str:
    from django.conf import settings

    return f"{settings.DOCUMENT_RELAY_PREFIX}:doc.*"
