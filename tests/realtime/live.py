"""Real servers for the realtime tests and bench: Daphne subprocesses on a shared database.

``LiveSite`` migrates a SQLite file once per test session (copied per site), seeds the cast
(alice owns, bob edits, carol views) with a task and API tokens, and starts as many Daphne
processes as asked, all on that database; with ``redis_url`` they relay through Redis
(production mode), without it each runs in embedded mode.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

import redis
from pycrdt import merge_updates

from collab.lib import ytext

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = Path(__file__).resolve().parent / "node"
TEST_REDIS_URL = os.environ.get("COEDIT_TEST_REDIS_URL", "redis://127.0.0.1:6379/11")


def redis_available(url: str = TEST_REDIS_URL) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"server on port {port} did not start")


@dataclass
class Cast:
    task_id: int
    document_id: int
    tokens: dict[str, str]


@dataclass
class Server:
    port: int
    process: subprocess.Popen[bytes]
    log_path: Path

    def url(self, task_id: int) -> str:
        return f"ws://127.0.0.1:{self.port}/ws/tasks/{task_id}/doc"

    def kill(self) -> None:
        """SIGKILL: no shutdown handler, no final flush."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.kill()


@dataclass
class LiveSite:
    directory: Path
    redis_url: str | None = None
    settings: dict[str, str] = field(default_factory=dict)
    # Production mode: a PostgreSQL database of its own (else a SQLite file in ``directory``).
    database_url: str | None = None
    servers: list[Server] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        (self.directory / "static").mkdir(exist_ok=True)
        self.prefix = f"coedit-test-{uuid.uuid4().hex[:8]}"

    def env(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if key not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}
        }
        env.update(
            DJANGO_SETTINGS_MODULE="collab.settings",
            DATA_DIR=str(self.directory),
            STATIC_ROOT=str(self.directory / "static"),
            SECRET_KEY="live-test-secret-key-that-is-long-enough-0123456789",
            DOCUMENT_CATCHUP_SECONDS="0.5",
            DOCUMENT_RELAY_PREFIX=self.prefix,
            LOG_LEVEL="WARNING",
            PYTHONPATH=str(ROOT),
        )
        if self.redis_url:
            env["REDIS_URL"] = self.redis_url
        if self.database_url:
            env["DATABASE_URL"] = self.database_url
        env.update(self.settings)
        return env

    def manage(self, *args: str) -> str:
        result = subprocess.run(
            [sys.executable, "-m", "tests.realtime.live_seed", *args],
            cwd=ROOT,
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if result.returncode != 0:
            raise RuntimeError(f"live_seed {args} failed:\n{result.stderr[-3000:]}")
        return result.stdout

    @property
    def database(self) -> Path:
        return self.directory / "collab.sqlite3"

    def prepare(self, template: Path | None = None, *, text: str = "") -> Cast:
        """Migrate (or copy a migrated template database), then seed the cast and a task whose
        document reads ``text`` (written through the edit service)."""
        if self.database_url:
            self.manage("migrate")
        elif template is not None and template.exists():
            shutil.copy(template, self.database)
        else:
            self.manage("migrate")
        return Cast(**json.loads(self.manage("seed", text)))

    def texts(self, document_id: int) -> dict[str, str]:
        """``Document.text`` and the text rebuilt from snapshot + update log, read directly."""
        if self.database_url:
            return self._texts_postgres(document_id)
        with sqlite3.connect(self.database, timeout=20) as db:
            column, ystate, snapshot_id = db.execute(
                "SELECT text, ystate, snapshot_update_id FROM tasks_document WHERE id = ?",
                (document_id,),
            ).fetchone()
            rows = db.execute(
                "SELECT data FROM tasks_documentupdate WHERE document_id = ? AND id > ?"
                " ORDER BY id",
                (document_id, snapshot_id),
            ).fetchall()
        parts = [bytes(ystate)] + [bytes(data) for (data,) in rows if data]
        state = merge_updates(*parts) if len(parts) > 1 else parts[0]
        return {"column": column, "log": ytext.text_of(state)}

    def _texts_postgres(self, document_id: int) -> dict[str, str]:
        import psycopg

        with psycopg.connect(self.database_url or "") as db:
            column, ystate, snapshot_id = db.execute(
                "SELECT text, ystate, snapshot_update_id FROM tasks_document WHERE id = %s",
                (document_id,),
            ).fetchone() or ("", b"", 0)
            rows = db.execute(
                "SELECT data FROM tasks_documentupdate WHERE document_id = %s AND id > %s"
                " ORDER BY id",
                (document_id, snapshot_id),
            ).fetchall()
        parts = [bytes(ystate)] + [bytes(data) for (data,) in rows if data]
        state = merge_updates(*parts) if len(parts) > 1 else parts[0]
        return {"column": column, "log": ytext.text_of(state)}

    def start(self, *, port: int | None = None, launcher: list[str] | None = None) -> Server:
        """Start Daphne (``launcher`` replaces ``python -m daphne``, e.g. under a profiler)."""
        port = port or free_port()
        log_path = self.directory / f"daphne-{port}.log"
        with log_path.open("ab") as log_file:
            process = subprocess.Popen(
                [
                    *(launcher or [sys.executable, "-m", "daphne"]),
                    "-b",
                    "127.0.0.1",
                    "-p",
                    str(port),
                    "collab.asgi:application",
                ],
                cwd=ROOT,
                env=self.env(),
                stdout=log_file,
                stderr=subprocess.STDOUT,
            )
        server = Server(port=port, process=process, log_path=log_path)
        self.servers.append(server)
        _wait_for_port(port, process)
        return server

    def close(self) -> None:
        for server in self.servers:
            server.stop()


def migrated_template(directory: Path) -> Path:
    """A migrated SQLite database to copy for each site (migrating takes seconds)."""
    site = LiveSite(directory)
    site.manage("migrate")
    return directory / "collab.sqlite3"
