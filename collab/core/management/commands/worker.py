"""``manage.py worker``: a Celery worker under its own supervision (production mode).

The worker runs as a child process ``celery -A collab worker`` without heartbeat, mingle and
gossip: with kombu / celery 5.x on Redis, those are what fail when Redis restarts (the worker
exits with ``Unrecoverable error: AttributeError("'NoneType' object has no attribute
'hostname'")`` from gossip/mingle closing a channel, or stops consuming after a reconnection:
kombu#582, celery#8030), and Collab uses none of them. Should the worker still exit
(any unrecoverable error), it is started again after a bounded backoff (1, 2, 4 ... 30 s),
so a Redis outage never needs a person. ``--beat`` (the default) also runs the periodic jobs of
``CELERY_BEAT_SCHEDULE`` (the agents' sweep); run it in one worker only (``--no-beat`` for the
others; a second sweep is harmless, only wasted). SIGTERM/SIGINT stop the child and this.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

BACKOFF_CAP_SECONDS = 30
HEALTHY_AFTER_SECONDS = 60  # a child that ran this long starts the backoff afresh


def celery_command(*, beat: bool, extra: list[str]) -> list[str]:
    command = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "collab",
        "worker",
        "--without-heartbeat",
        "--without-mingle",
        "--without-gossip",
    ]
    if beat:
        command += ["--beat", f"--schedule={settings.DATA_DIR / 'celerybeat-schedule'}"]
    return [*command, *extra]


class Command(BaseCommand):
    help = "Run a supervised Celery worker (restarted if it exits), with the periodic jobs."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--no-beat", action="store_true", help="No periodic jobs here.")
        parser.add_argument("--max-restarts", type=int, default=-1, help="-1: no limit.")
        parser.add_argument("celery_args", nargs="*", help="More `celery worker` options.")

    def handle(
        self, *args: Any, no_beat: bool, max_restarts: int, celery_args: list[str], **options: Any
    ) -> None:
        settings.DATA_DIR.mkdir(parents=True, exist_ok=True)
        command = celery_command(beat=not no_beat, extra=celery_args)
        stopping = False
        child: subprocess.Popen[bytes] | None = None

        def stop(signum: int, frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True
            if child is not None and child.poll() is None:
                child.send_signal(signum)

        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
        restarts, backoff = 0, 1.0
        while True:
            started = time.monotonic()
            child = subprocess.Popen(command)  # noqa: S603 (our own interpreter and celery)
            code = child.wait()
            if stopping:
                return
            if time.monotonic() - started > HEALTHY_AFTER_SECONDS:
                backoff = 1.0
            if max_restarts >= 0 and restarts >= max_restarts:
                raise SystemExit(code)
            restarts += 1
            self.stderr.write(f"worker exited ({code}); starting it again in {backoff:.0f} s")
            time.sleep(backoff)
            backoff = min(BACKOFF_CAP_SECONDS, backoff * 2)
