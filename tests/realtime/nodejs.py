"""Running the real npm Yjs packages (tests/realtime/node/package.json) from pytest and bench.

``node_workdir()`` installs the pinned packages with ``npm ci`` once into a cache directory
keyed by the lockfile, and copies the scripts next to them (ES modules resolve packages from
the script's own directory). Without Node the caller skips, except under CI=true where a missing
Node is a failure, as for browsers.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.realtime.live import NODE_DIR


def _cache_root() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "collab-node-tests"


def node_workdir() -> Path:
    node, npm = shutil.which("node"), shutil.which("npm")
    if not node or not npm:
        message = "Node.js and npm are needed for the Yjs interop tests"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    lock = (NODE_DIR / "package-lock.json").read_bytes()
    workdir = _cache_root() / hashlib.sha256(lock).hexdigest()[:16]
    if not (workdir / "node_modules" / ".installed").exists():
        workdir.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copy(NODE_DIR / name, workdir / name)
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"],
            cwd=workdir,
            check=True,
            timeout=300,
        )
        (workdir / "node_modules" / ".installed").touch()
    for script in NODE_DIR.glob("*.mjs"):
        shutil.copy(script, workdir / script.name)
    return workdir


class NodeClient:
    """tests/realtime/node/client.mjs: a y-websocket WebsocketProvider driven line by line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    @classmethod
    async def start(cls, workdir: Path, base_url: str, token: str) -> NodeClient:
        process = await asyncio.create_subprocess_exec(
            "node",
            str(workdir / "client.mjs"),
            base_url,
            token,
            cwd=workdir,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        return cls(process)

    async def command(self, timeout: float = 20, **command: Any) -> dict[str, Any]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        self.process.stdin.write((json.dumps(command) + "\n").encode())
        await self.process.stdin.drain()
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), timeout)
            if not line:
                raise AssertionError("the Node client exited")
            answer: dict[str, Any] = json.loads(line)
            if "event" not in answer:
                return answer

    async def close(self) -> None:
        if self.process.returncode is None:
            with contextlib.suppress(AssertionError, TimeoutError, OSError):
                await self.command(op="close", timeout=5)
            try:
                await asyncio.wait_for(self.process.wait(), 5)
            except TimeoutError:
                self.process.kill()
                await self.process.wait()
