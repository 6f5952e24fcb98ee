"""Browser tests: a real Collab server (Daphne, WebSockets included) and headless Chromium.

``server_url`` starts ``manage.py serve`` once per session, on a free port, against the test
database, in whichever mode the suite runs: embedded (SQLite file, in-process channel layer and
worker) or production (``DATABASE_URL`` + ``REDIS_URL``). Each test that uses it is
transactional: what the browser creates is flushed afterwards.

``new_context()`` opens an isolated browser context (its own cookies: one person each) whose
``base_url`` is the server. Chromium is Debian's ``/usr/bin/chromium`` driven by Playwright;
it is never downloaded. Without it the tests skip, except under CI (``CI=true``) where they
fail. On a failure every open page is saved as a screenshot under ``test-artifacts/``.

Playwright's sync API makes the main thread look like it runs an event loop, which Django
answers with "async unsafe" errors: keep browser tests free of ORM calls (drive the app
through the UI or HTTP), and let the fixtures below start Chromium after the test database
is ready and stop it before the flush.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

from tests.processes import live_env, worker_command

CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ARTIFACTS = Path(settings.BASE_DIR) / "test-artifacts"
# Waits for things to appear in the browser; generous because the machine may be busy.
# Nothing asserts on how long anything took.
WAIT_MS = 15_000
SERVER_START_SECONDS = 90
SCREENSHOT_MS = 5_000
expect.set_options(timeout=WAIT_MS)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "daphne_args(*args): run own_server as daphne with these options"
    )


# A headless Chromium page on a loaded 2-core machine has, rarely, stopped answering for good
# in the middle of a long test (an action hung at "scrolling into view", then the screenshot of
# that page too): twice in the CI runs of the last sessions, never in five local runs of the
# same test. Such a test runs once more. Only an action's timeout does this, never a failed
# assertion (``expect`` raises AssertionError) or a console error, so a real defect still fails
# both runs. (The journey test, whose third page once stopped taking in its socket messages,
# also reruns on a failed assertion: see its module.) A failure prints, outside pytest's
# capture so that it shows even when the rerun passes, what each page was doing
# (``PAGE_PROBE``) and the end of the server's log.
RERUN_ON = [PlaywrightTimeoutError]

# Installed in every page: what the failure report reads back (``_page_report``). A page
# whose timers stopped was frozen; one whose frames stopped does not paint; a socket whose
# last message is old stopped receiving.
PAGE_PROBE = """
(() => {
  const now = () => performance.now();
  const probe = window.__probe = { tick: now(), frame: now(), events: [], sockets: [] };
  setInterval(() => {
    probe.tick = now();
    requestAnimationFrame(() => { probe.frame = now(); });
  }, 500);
  for (const name of ['freeze', 'resume', 'visibilitychange', 'pagehide', 'pageshow']) {
    document.addEventListener(name, () => probe.events.push([name, Math.round(now()),
      document.visibilityState]), true);
  }
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor (...args) {
      super(...args);
      const stats = { url: String(args[0]), opened: Math.round(now()), messages: 0, last: null,
        closed: null };
      probe.sockets.push(stats);
      this.addEventListener('message', () => { stats.messages += 1; stats.last = now(); });
      this.addEventListener('close', (e) => { stats.closed = [Math.round(now()), e.code]; });
    }
  };
})();
"""
PROBE_READ = """() => {
  const p = window.__probe, now = performance.now();
  if (!p) return null;
  const ago = (t) => t === null ? null : Math.round(now - t);
  return { visibility: document.visibilityState, focus: document.hasFocus(),
    msSinceTimer: ago(p.tick), msSinceFrame: ago(p.frame), events: p.events,
    sockets: p.sockets.map((s) => ({ url: s.url.replace(/^wss?:\\/\\/[^/]+/, ''),
      messages: s.messages, msSinceMessage: ago(s.last), closed: s.closed })) };
}"""
SERVER_LOG_LINES = 60


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)
            if item.get_closest_marker("flaky") is None:  # a test's own rule stands
                item.add_marker(pytest.mark.flaky(reruns=1, only_rerun=RERUN_ON))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    report = yield
    if report.when == "call":
        item.stash[_FAILED] = report.failed
    return report


_FAILED = pytest.StashKey[bool]()


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LiveServer:
    """``manage.py serve`` in a subprocess on a fixed port, against the test database.

    With ``daphne_args`` it runs ``daphne`` itself with those options instead (no embedded
    worker), for tests of the server's own behaviour.
    """

    def __init__(self, daphne_args: tuple[str, ...] | None = None) -> None:
        self.daphne_args = daphne_args
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = ARTIFACTS / f"server-{self.port}.log"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        ARTIFACTS.mkdir(exist_ok=True)
        env = dict(live_env(), PYTHONUNBUFFERED="1")
        if self.daphne_args is None:
            command = [sys.executable, "manage.py", "serve", "--host", "127.0.0.1"]
            command += ["--port", str(self.port)]
        else:
            command = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(self.port)]
            command += [*self.daphne_args, "collab.asgi:application"]
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                command,
                cwd=settings.BASE_DIR,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self._wait_until_serving()

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def _wait_until_serving(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + SERVER_START_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited early:\n{self.log.read_text()[-4000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/accounts/login/", timeout=5) as answer:  # noqa: S310
                    if answer.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.2)
        self.stop()
        raise RuntimeError(f"the server did not answer in time:\n{self.log.read_text()[-4000:]}")


@pytest.fixture(scope="session")
def collab_server(django_db_setup: None) -> Iterator[LiveServer]:
    """A ``manage.py serve`` process using this session's test database, shared by tests."""
    server = LiveServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_server(request: pytest.FixtureRequest, transactional_db: None) -> Iterator[LiveServer]:
    """A server of this test's own, for tests that stop and restart it, or that mark
    themselves ``@pytest.mark.daphne_args("--websocket_timeout", "3")``."""
    marker = request.node.get_closest_marker("daphne_args")
    server = LiveServer(daphne_args=tuple(marker.args) if marker else None)
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def server_url(request: pytest.FixtureRequest, transactional_db: None) -> str:
    """The live server's URL (the test's own if it asked for ``own_server``); the test
    database is flushed after the test."""
    if "own_server" in request.fixturenames:
        server: LiveServer = request.getfixturevalue("own_server")
    else:
        server = request.getfixturevalue("collab_server")
    return server.url


@pytest.fixture
def worker(server_url: str) -> Iterator[None]:
    """Production mode runs turns in a separate worker; embedded mode inside the server."""
    if not settings.REDIS_URL:
        yield
        return
    process = subprocess.Popen(
        worker_command("browser", "--pool=solo", "--loglevel=WARNING"),
        cwd=settings.BASE_DIR,
        env=live_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        yield
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()


def _chromium() -> Path:
    if CHROMIUM.exists():
        return CHROMIUM
    message = f"Chromium not found at {CHROMIUM} (apt-get install -y chromium)"
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(message)
    pytest.skip(message)


@pytest.fixture
def browser(server_url: str) -> Iterator[Browser]:
    """Headless Chromium, started after the server and the test database are ready."""
    executable = _chromium()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(executable), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def new_context(
    browser: Browser, server_url: str, request: pytest.FixtureRequest
) -> Iterator[Callable[[], BrowserContext]]:
    """``new_context()``: a fresh browser profile (one person) with ``base_url`` set."""
    contexts: list[BrowserContext] = []

    def _new() -> BrowserContext:
        context = browser.new_context(base_url=server_url, viewport={"width": 1280, "height": 800})
        context.set_default_timeout(WAIT_MS)
        context.add_init_script(PAGE_PROBE)
        contexts.append(context)
        return context

    yield _new
    if request.node.stash.get(_FAILED, False):
        ARTIFACTS.mkdir(exist_ok=True)
        _report(request, contexts)
        for i, context in enumerate(contexts):
            for j, page in enumerate(context.pages):
                # A page that stopped painting must not hide the failure behind a second one.
                try:
                    page.screenshot(
                        path=ARTIFACTS / f"{request.node.name}-{i}-{j}.png",
                        full_page=True,
                        timeout=SCREENSHOT_MS,
                    )
                except PlaywrightError as error:
                    print(f"no screenshot of page {i}-{j} ({page.url}): {error.message}")
    for context in contexts:
        context.close()


def _report(request: pytest.FixtureRequest, contexts: list[BrowserContext]) -> None:
    """What each page was doing when the test failed, and the end of the server's log, on the
    terminal past pytest's capture (which would hide it when the rerun passes) and in
    ARTIFACTS."""
    test = request.node.name
    lines = [f"--- browser state at the failure of {test}"]
    for i, context in enumerate(contexts):
        for j, page in enumerate(context.pages):
            try:
                state = page.evaluate(PROBE_READ)
            except PlaywrightError as error:
                state = f"not answering ({error.message.splitlines()[0]})"
            lines.append(f"page {i}-{j} {page.url}: {state}")
    logs = sorted(ARTIFACTS.glob("server-*.log"), key=lambda path: path.stat().st_mtime)
    if logs:
        tail = logs[-1].read_text(errors="replace").splitlines()[-SERVER_LOG_LINES:]
        lines += [f"--- the last {len(tail)} lines of {logs[-1].name}", *tail]
    text = "\n".join(lines) + "\n"
    (ARTIFACTS / f"{test}-state.txt").write_text(text)
    capture = request.config.pluginmanager.getplugin("capturemanager")
    with capture.global_and_fixture_disabled() if capture else contextlib.nullcontext():
        sys.stderr.write("\n" + text)


@pytest.fixture
def page(new_context: Callable[[], BrowserContext]) -> Page:
    """One page in one fresh context."""
    return new_context().new_page()
