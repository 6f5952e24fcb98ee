"""The one place where Channels group names are built."""

from __future__ import annotations


def task_group(task_id: int) -> str:
    return f"task.{task_id}"
