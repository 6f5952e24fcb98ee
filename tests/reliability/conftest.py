"""Real Daphne processes for the reliability suite, in the mode the test session runs in.

With ``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL`` set, as CI's production-mode job does, each
site gets a PostgreSQL database of its own on that server and relays through that Redis: the
mode where NUL characters fail, frames are size-limited and events cross processes. Without them
the site runs in embedded mode (a SQLite file, no Redis). See tests/realtime/live.py.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import psycopg
import pytest

from tests.realtime.live import LiveSite, free_port

DATABASE_URL = os.environ.get("DATABASE_URL", "")
REDIS_URL = os.environ.get("REDIS_URL", "")
PRODUCTION = DATABASE_URL.startswith("postgres") and bool(REDIS_URL)


def _admin_url() -> str:
    return DATABASE_URL.rsplit("/", 1)[0] + "/postgres"


@contextmanager
def live_site(directory: Path, *, redis_url: str | None = None) -> Iterator[LiveSite]:
    """A site in the session's mode; ``redis_url`` relays through that Redis instead (a
    ``private_redis`` a test may stop), on SQLite in embedded mode."""
    # Production mode: access changes are pushed (the periodic re-check waits a minute, so only
    # the push can pass the tests). Embedded: a management command has no way into the server's
    # in-process layer, so the periodic re-check (1 s here) is what applies them.
    refresh = "60" if PRODUCTION else "1"
    settings = {"DOCUMENT_ROLE_REFRESH_SECONDS": refresh, "LOG_LEVEL": "WARNING"}
    if not PRODUCTION:
        live = LiveSite(directory / "site", redis_url=redis_url, settings=settings)
        try:
            yield live
        finally:
            live.close()
        return
    name = f"reliability_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(_admin_url(), autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    live = LiveSite(
        directory / "site",
        redis_url=redis_url or REDIS_URL,
        database_url=DATABASE_URL.rsplit("/", 1)[0] + "/" + name,
        settings=settings,
    )
    try:
        yield live
    finally:
        live.close()
        with psycopg.connect(_admin_url(), autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def site(tmp_path: Path) -> Iterator[LiveSite]:
    with live_site(tmp_path) as live:
        yield live


@dataclass
class PrivateRedis:
    """A ``redis-server`` of this test's own (a free port, no persistence): a test may stop and
    start it; the machine's shared Redis is never touched."""

    port: int
    log: Path
    process: subprocess.Popen[bytes] | None = field(default=None)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
                 "--appendonly", "no"],
                stdout=out,
                stderr=subprocess.STDOUT,
            )  # fmt: skip
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError("redis-server did not start")

    def stop(self) -> None:
        """SIGKILL: an outage, not a shutdown."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)


@pytest.fixture
def private_redis(tmp_path: Path) -> Iterator[PrivateRedis]:
    redis = PrivateRedis(port=free_port(), log=tmp_path / "redis.log")
    redis.start()
    try:
        yield redis
    finally:
        redis.stop()
