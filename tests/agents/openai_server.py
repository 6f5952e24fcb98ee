"""Real OpenAI-compatible HTTP servers for the tests of the ``openai`` provider.

* ``llama_server``: llama-cpp-python's own OpenAI-compatible server (its ``server`` extra)
  serving the shipped SmolLM2 file, started on a free port for the test session;
  ``llama_server_with_key``: the same, refusing requests without ``SERVER_KEY``;
* ``silent_server``: a socket that accepts connections and never answers (a timeout);
* ``closed_port``: a port nothing listens on.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator

import pytest

from agents.llm import embedded

SERVER_CONTEXT = 1024  # small: a long document overflows it (the server then refuses)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _wait_for(
    url: str,
    process: subprocess.Popen[bytes],
    timeout: float,
    headers: dict[str, str] | None = None,
) -> None:
    deadline = time.monotonic() + timeout
    request = urllib.request.Request(url, headers=headers or {})  # noqa: S310
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the model server exited with {process.returncode}")
        with contextlib.suppress(OSError), urllib.request.urlopen(request, timeout=2) as answer:  # noqa: S310
            json.load(answer)
            return
        time.sleep(0.3)
    raise RuntimeError(f"the model server did not come up at {url}")


SERVER_KEY = "test-server-key"


@pytest.fixture(scope="session")
def llama_server() -> Iterator[str]:
    """The base URL (``http://127.0.0.1:<port>/v1``) of llama-cpp-python's server."""
    yield from _llama_server()


@pytest.fixture(scope="session")
def llama_server_with_key() -> Iterator[str]:
    """The same server, refusing every request without the key ``SERVER_KEY``."""
    yield from _llama_server("--api_key", SERVER_KEY)


def _llama_server(*extra: str) -> Iterator[str]:
    if importlib.util.find_spec("uvicorn") is None or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("needs llama-cpp-python[server] (the dev extra)")
    path = embedded.embedded_model_path()  # found the way the embedded provider finds it
    embedded.verify_model_file(path)
    port = free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            str(SERVER_CONTEXT),
            "--n_threads",
            "2",
            "--seed",
            "7",
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        headers = {"Authorization": f"Bearer {SERVER_KEY}"} if extra else {}
        _wait_for(f"http://127.0.0.1:{port}/v1/models", process, timeout=180, headers=headers)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def silent_server() -> Iterator[str]:
    """A base URL whose server accepts the connection and then never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            with contextlib.suppress(OSError):
                accepted.append(listener.accept()[0])

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    finally:
        stop.set()
        thread.join(timeout=2)
        for conn in accepted:
            conn.close()
        listener.close()


@pytest.fixture
def closed_port() -> str:
    """A base URL on a port nothing listens on."""
    return f"http://127.0.0.1:{free_port()}/v1"
