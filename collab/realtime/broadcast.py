"""The only module that calls the channel layer.

Services register these functions with ``transaction.on_commit``. They run in three kinds of
threads, and each needs the event loop that owns the channel layer's connections:

* a request thread of the ASGI server (Django runs sync views through ``sync_to_async``):
  ``async_to_sync`` goes back to the server's loop;
* a Celery worker thread or a management command: no loop is around, and calling
  ``async_to_sync`` there makes a fresh loop per call, which channels-redis ≥ 4 answers with
  "Event loop is closed" on the next call. Such code publishes through one long-lived
  background loop instead (``_publisher_loop``), or, in the embedded single process, through
  the web server's own loop, which the ASGI app registers (see ``register_server_loop``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Coroutine
from typing import Any

from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import get_channel_layer
from django.template.loader import render_to_string

from collab.realtime.groups import member_group, task_group

log = logging.getLogger(__name__)

_server_loop: asyncio.AbstractEventLoop | None = None
_background_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def register_server_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Called by the ASGI app: in-process workers publish through the server's loop."""
    global _server_loop
    _server_loop = loop


def _publisher_loop() -> asyncio.AbstractEventLoop:
    global _background_loop
    if _server_loop is not None and _server_loop.is_running():
        return _server_loop
    with _lock:
        if _background_loop is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="broadcast", daemon=True).start()
            _background_loop = loop
    return _background_loop


def _in_request_thread() -> bool:
    loop = getattr(SyncToAsync.threadlocal, "main_event_loop", None)
    return loop is not None and loop.is_running()


def _run(coro: Coroutine[Any, Any, None]) -> None:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:  # pragma: no cover - a programming error, not a runtime condition
        coro.close()
        raise RuntimeError("Use the async publishers (agroup_send) inside an event loop.")
    if _in_request_thread():

        async def _wrapped() -> None:
            await coro

        async_to_sync(_wrapped)()
    else:
        asyncio.run_coroutine_threadsafe(coro, _publisher_loop()).result(timeout=10)


async def agroup_send(group: str, event: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is None:  # pragma: no cover - settings always configure a layer
        return
    await layer.group_send(group, event)


def group_send(group: str, event: dict[str, Any]) -> None:
    """Publish ``event`` to ``group`` from synchronous code; never raises on a lost message."""
    try:
        _run(agroup_send(group, event))
    except Exception:  # a broadcast is best-effort; the database stays the source of truth
        log.exception("broadcast to %s failed", group)


def chat_message(
    message_id: int, *, extras: dict[str, Any] | None = None, message: Any | None = None
) -> None:
    """A new (or changed) chat message, as JSON for API clients and as an htmx fragment for
    browsers.

    The fragment is rendered once here, not once per open socket. ``extras`` are added to the
    payload (e.g. an agent's assumption and its Undo); a message with extras gets a second
    fragment for viewers (``html_readonly``: no buttons). ``message``: the committed row, when
    the caller has it (saves a query).
    """
    from collab.tasks.models import Message
    from collab.tasks.serializers import message_event

    if message is None:
        message = Message.objects.filter(pk=message_id).first()
    if message is None:
        return
    payload = {**message_event(message), **(extras or {})}
    template = "tasks/_chat_message_oob.html"
    event = {
        "type": "chat.message",
        "message": payload,
        "html": render_to_string(template, {"message": payload, "can_edit": True}),
    }
    if extras:
        event["html_readonly"] = render_to_string(template, {"message": payload, "can_edit": False})
    group_send(task_group(message.task_id), event)


def task_changed(task_id: int) -> None:
    from collab.tasks.models import Task

    task = Task.objects.filter(pk=task_id).first()
    if task is None:
        return
    payload = {
        "id": task.pk,
        "status": task.status,
        "status_label": task.get_status_display(),
        "title": task.title,
    }
    html = render_to_string("tasks/_task_status_oob.html", {"task": payload})
    group_send(task_group(task_id), {"type": "task.changed", "task": payload, "html": html})


def membership_ended(workspace_id: int, user_id: int) -> None:
    """Close the sockets of someone who was removed from (or left) a workspace."""
    group_send(
        member_group(workspace_id, user_id),
        {"type": "membership.ended", "workspace_id": workspace_id},
    )


def agent_event(task_id: int, *, payload: dict[str, Any], html: str, html_readonly: str) -> None:
    """An agent event (turn status, streamed text, cards) built by ``agents/events.py``.

    Consumers send ``payload`` to JSON clients and one of the HTML fragments to browsers
    (``html_readonly`` to viewers, whose pages show no buttons).
    """
    group_send(
        task_group(task_id),
        {"type": "agent.event", "payload": payload, "html": html, "html_readonly": html_readonly},
    )
