"""A job for ``bench/turns.py`` only (its worker imports it with ``--include``): publishes one
stream event to a task's pages and does nothing else, so that the time from ``delay`` to a
WebSocket client is the floor of Celery + Channels + Daphne under every agent turn."""

from __future__ import annotations

from celery import shared_task


@shared_task
def publish_stream(task_id: int, mark: int) -> None:
    from collab.realtime import broadcast

    payload = {"type": "agent.stream", "task_id": task_id, "pipeline": mark}
    broadcast.agent_event(task_id, payload=payload, html="", html_readonly="")
