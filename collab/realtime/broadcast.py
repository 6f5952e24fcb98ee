"""The only module that calls the channel layer.

Services register these functions with ``transaction.on_commit``. They run in three kinds of
threads, and each needs the event loop that owns the channel layer's connections:

* a request thread of the ASGI server (Django runs sync views through ``sync_to_async``):
  ``async_to_sync`` goes back to the server's loop;
* a Celery worker thread or a management command: no loop is around, and calling
  ``async_to_sync`` there makes a fresh loop per call, which channels-redis ≥ 4 answers with
  "Event loop is closed" on the next call. Such code publishes through one long-lived
  background loop instead (``_background_outbox``), or, in the embedded single process, through
  the web server's own loop, which the ASGI app registers (see ``register_server_loop``).

On the background loop the caller does not wait for Redis: events are handed to one queue and
sent one after another in the order they were handed over (``_Outbox``), so an agent turn does
not stop for a round trip per event, and a page still sees a turn's events in order. The queue
is drained at exit (``flush``), so a management command that publishes and ends loses nothing.
"""

from __future__ import annotations

import asyncio
import atexit
import functools
import logging
import threading
from collections import deque
from collections.abc import Coroutine
from typing import Any

from asgiref.sync import SyncToAsync, async_to_sync
from channels.layers import get_channel_layer
from django.template.loader import render_to_string

from collab.realtime.groups import ACCESS_GROUP, member_group, task_group
from collab.tasks.models import Message, Task
from collab.tasks.serializers import message_event

log = logging.getLogger(__name__)

_server_loop: asyncio.AbstractEventLoop | None = None
_lock = threading.Lock()


def register_server_loop(loop: asyncio.AbstractEventLoop) -> None:
    """Called by the ASGI app: in-process workers publish through the server's loop."""
    global _server_loop
    _server_loop = loop


class _Outbox:
    """Coroutines sent one at a time, in the order they were handed over, on one loop; the
    threads that hand them over do not wait. A send that fails or takes longer than
    ``send_timeout`` seconds is logged and the next one goes; while more than ``max_pending``
    wait (Redis is down or stuck), new ones are dropped with a warning, so memory stays bounded.
    A page that missed an event shows its outcome after a reload: the database is the record."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        send_timeout: float = 10.0,
        max_pending: int = 10_000,
    ) -> None:
        self.loop = loop
        self.send_timeout = send_timeout
        self.max_pending = max_pending
        self._pending: deque[Coroutine[Any, Any, None]] = deque()
        self._draining = False
        self.dropped = 0

    def submit(self, coro: Coroutine[Any, Any, None]) -> None:
        """Thread-safe: queue ``coro`` behind those handed over before it."""
        self.loop.call_soon_threadsafe(self._push, coro)

    def _push(self, coro: Coroutine[Any, Any, None], *, marker: bool = False) -> None:
        if len(self._pending) >= self.max_pending and not marker:
            coro.close()
            self.dropped += 1
            if self.dropped == 1 or self.dropped % 1000 == 0:
                log.warning("broadcast backlog full: %s events dropped so far", self.dropped)
            return
        self._pending.append(coro)
        if not self._draining:
            self._draining = True
            self.loop.create_task(self._drain())

    async def _drain(self) -> None:
        try:
            while self._pending:
                coro = self._pending.popleft()
                try:
                    await asyncio.wait_for(coro, self.send_timeout)
                except Exception:  # best-effort, as group_send has always been
                    log.exception("broadcast failed")
        finally:
            self._draining = False

    def flush(self, timeout: float) -> bool:
        """Wait until everything handed over so far was sent; False if that took too long."""
        done = threading.Event()

        async def _set() -> None:
            done.set()

        self.loop.call_soon_threadsafe(functools.partial(self._push, _set(), marker=True))
        return done.wait(timeout)


_outbox: _Outbox | None = None


def _background_outbox() -> _Outbox:
    global _outbox
    with _lock:
        if _outbox is None:
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="broadcast", daemon=True).start()
            _outbox = _Outbox(loop)
            atexit.register(flush)
    return _outbox


def flush(timeout: float = 5.0) -> bool:
    """Wait until the events this process handed to the background loop were sent (at exit,
    and for callers that must know)."""
    return _outbox.flush(timeout) if _outbox is not None else True


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
    elif _server_loop is not None and _server_loop.is_running():
        asyncio.run_coroutine_threadsafe(coro, _server_loop).result(timeout=10)
    else:
        _background_outbox().submit(coro)


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
    message_id: int,
    *,
    extras: dict[str, Any] | None = None,
    message: Any | None = None,
    per_user: dict[int, dict[str, Any]] | None = None,
) -> None:
    """A new (or changed) chat message, as JSON for API clients and as an htmx fragment for
    browsers.

    The fragment is rendered once here, not once per open socket. ``extras`` are added to the
    payload (e.g. an agent's assumption and its Undo); a message with extras gets a second
    fragment for viewers (``html_readonly``: no buttons). ``message``: the committed row, when
    the caller has it (saves a query). ``per_user``: more fields that only one person may see
    (user id -> fields, e.g. the remembered items of theirs an agent's reply used): each of
    those people gets their own payload and fragments, every other socket the common ones.
    """
    if message is None:
        message = Message.objects.filter(pk=message_id).first()
    if message is None:
        return
    payload = {**message_event(message), **(extras or {})}
    event = {"type": "chat.message", **_message_fragments(payload, readonly=bool(extras))}
    if per_user:
        event["for_user"] = {
            str(user_id): _message_fragments({**payload, **fields}, readonly=True)
            for user_id, fields in per_user.items()
        }
    group_send(task_group(message.task_id), event)


def _message_fragments(payload: dict[str, Any], *, readonly: bool) -> dict[str, Any]:
    template = "tasks/_chat_message_oob.html"
    out = {
        "message": payload,
        "html": render_to_string(template, {"message": payload, "can_edit": True}),
    }
    if readonly:
        out["html_readonly"] = render_to_string(template, {"message": payload, "can_edit": False})
    return out


def task_changed(task_id: int) -> None:
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
    access_changed(user_id)


def access_changed(user_id: int, *, ended_sessions: list[str] | None = None) -> None:
    """Someone's access changed (role, token revoked, deactivated, logged out): every web
    process re-checks that person's open sockets at once and closes or downgrades them
    (collab/realtime/access.py). ``ended_sessions``: session keys that are over even if the
    database still holds them (a logout tells before it deletes its session). Register it
    with ``transaction.on_commit``."""
    group_send(
        ACCESS_GROUP,
        {"type": "access.changed", "user_id": user_id, "ended_sessions": ended_sessions or []},
    )


def agent_event(task_id: int, *, payload: dict[str, Any], html: str, html_readonly: str) -> None:
    """An agent event (turn status, streamed text, cards) built by ``agents/outbox/events.py``.

    Consumers send ``payload`` to JSON clients and one of the HTML fragments to browsers
    (``html_readonly`` to viewers, whose pages show no buttons).
    """
    group_send(
        task_group(task_id),
        {"type": "agent.event", "payload": payload, "html": html, "html_readonly": html_readonly},
    )
