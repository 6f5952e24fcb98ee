"""The Celery worker that runs inside the web process in embedded mode (no Redis).

It is a real Celery ``WorkController`` with the solo pool, consuming the in-memory broker from
a daemon thread; jobs are enqueued and run exactly as with a separate ``celery worker``. There
is no ``celery beat`` beside it, so its own timer sends the periodic jobs of
``CELERY_BEAT_SCHEDULE`` (by name, at their intervals) into the same in-memory broker.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import timedelta
from typing import Any

from celery.worker import WorkController

from collab.celery import app

log = logging.getLogger(__name__)


def start_embedded_worker() -> WorkController:
    worker = WorkController(
        app=app,
        hostname="embedded@collab",
        pool_cls="solo",
        concurrency=1,
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        loglevel="INFO",
    )
    threading.Thread(target=worker.start, name="celery-embedded", daemon=True).start()
    start_beat_timer()
    log.info("embedded Celery worker started (in-memory broker)")
    return worker


def _interval(schedule: Any) -> float | None:
    if isinstance(schedule, timedelta):
        return schedule.total_seconds()
    if isinstance(schedule, int | float):
        return float(schedule)
    return None  # crontab entries need a real beat


def start_beat_timer(*, stop: threading.Event | None = None) -> threading.Event:
    """Send each periodic job of ``beat_schedule`` every interval, from a daemon thread, until
    ``stop`` is set (returned). Sending never raises out of the loop."""
    stop = stop or threading.Event()
    entries = []
    for name, entry in (app.conf.beat_schedule or {}).items():
        interval = _interval(entry.get("schedule"))
        if interval is None or interval <= 0:
            log.warning("embedded timer: %s has no fixed interval; skipped", name)
            continue
        entries.append((entry["task"], interval, tuple(entry.get("args", ()))))

    def run() -> None:
        due = {task: time.monotonic() + interval for task, interval, _ in entries}
        while entries and not stop.is_set():
            now = time.monotonic()
            for task, interval, args in entries:
                if now >= due[task]:
                    due[task] = now + interval
                    try:
                        app.send_task(task, args=args)
                    except Exception:
                        log.warning("embedded timer: could not send %s", task, exc_info=True)
            stop.wait(max(0.05, min(due.values()) - time.monotonic()))

    threading.Thread(target=run, name="celery-embedded-beat", daemon=True).start()
    return stop
