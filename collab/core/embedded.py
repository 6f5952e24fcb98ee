"""The Celery worker that runs inside the web process in embedded mode (no Redis).

It is a real Celery ``WorkController`` with the solo pool, consuming the in-memory broker from
a daemon thread; jobs are enqueued and run exactly as with a separate ``celery worker``.
"""

from __future__ import annotations

import logging
import threading

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
    log.info("embedded Celery worker started (in-memory broker)")
    return worker
