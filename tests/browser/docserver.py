"""A real Collab web process (Daphne) on a throw-away SQLite database, for browser tests.

The server runs in a subprocess with the test settings, embedded mode and DEBUG on (so static
files come from the source tree). Data is set up and read back through short Django scripts run
in subprocesses, since the test process and the server do not share a database connection.
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

_SCRIPT_PRELUDE = """
import json, django
django.setup()
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class DocServer:
    data_dir: Path
    port: int = field(default_factory=free_port)
    extra_env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    sessions: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def env(self) -> dict[str, str]:
        env = {
            k: v
            for k, v in os.environ.items()
            if k not in {"DATABASE_URL", "REDIS_URL"} and not k.startswith("PYTEST_")
        }
        env.update(
            DJANGO_SETTINGS_MODULE="tests.settings",
            DATA_DIR=str(self.data_dir),
            DEBUG="1",
            LOG_LEVEL="WARNING",
            PYTHONPATH=str(ROOT),
        )
        env.update(self.extra_env)
        return env

    def run(self, code: str) -> Any:
        """Run ``code`` with Django set up in a subprocess; it must print one JSON value."""
        done = subprocess.run(
            [sys.executable, "-c", _SCRIPT_PRELUDE + code],
            cwd=ROOT,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"script failed: {done.stderr}")
        return json.loads(done.stdout.strip().splitlines()[-1])

    def migrate(self) -> None:
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
            cwd=ROOT,
            env=self.env,
            check=True,
            timeout=120,
        )

    @property
    def daphne_command(self) -> list[str]:
        address = ["-b", "127.0.0.1", "-p", str(self.port)]
        return [sys.executable, "-m", "daphne", *address, "collab.asgi:application"]

    def start(self) -> None:
        with (self.data_dir / "daphne.log").open("ab") as log:
            self.process = subprocess.Popen(
                self.daphne_command,
                cwd=ROOT,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"daphne exited: {(self.data_dir / 'daphne.log').read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("daphne did not start listening")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.process = None

    def restart(self) -> None:
        self.stop()
        self.start()

    def seed_cast(self) -> None:
        """alice owns Acme, bob edits, carol views; keeps a session key per person."""
        self.sessions = dict(
            self.run(
                """
from django.contrib.auth import get_user_model
from django.test import Client
from collab.workspaces.models import Role
from tests import factories
users = {name: factories.make_user(name) for name in ("alice", "bob", "carol")}
workspace = factories.make_workspace(users["alice"])
factories.add_member(workspace, users["bob"], Role.EDITOR)
factories.add_member(workspace, users["carol"], Role.VIEWER)
sessions = {}
for name, user in users.items():
    client = Client()
    client.force_login(user)
    sessions[name] = client.cookies["sessionid"].value
print(json.dumps(sessions))
"""
            )
        )

    def make_task(self, title: str = "Plan the offsite") -> int:
        return int(
            self.run(
                f"""
from collab.workspaces.models import Workspace
from tests import factories
task = factories.make_task(Workspace.objects.get(name="Acme"), title={title!r})
print(json.dumps(task.pk))
"""
            )
        )

    def _query(self, sql: str, *params: object) -> list[tuple[object, ...]]:
        database = f"file:{self.data_dir / 'collab.sqlite3'}?mode=ro"
        with sqlite3.connect(database, uri=True, timeout=20) as connection:
            return connection.execute(sql, params).fetchall()

    def version_id(self, task_id: int, text: str) -> int:
        """The newest saved version of the task's document that reads ``text``."""
        rows = self._query(
            "SELECT v.id FROM tasks_documentversion v JOIN tasks_document d"
            " ON v.document_id = d.id WHERE d.task_id = ? AND v.text = ? ORDER BY v.id DESC",
            task_id,
            text,
        )
        return int(str(rows[0][0]))

    def document_text(self, task_id: int) -> str:
        """``Document.text`` as the server last committed it."""
        rows = self._query("SELECT text FROM tasks_document WHERE task_id = ?", task_id)
        return str(rows[0][0])
