"""How the whole suite runs: ``make test`` is ``python -m tests.suite [pytest options]``.

Two passes, each a plain pytest run with the options given (a pass that selects nothing is
not a failure; both selecting nothing is, as pytest's own exit status 5):

1. the **parallel** pass: every test not listed in ``SERIAL``, spread over ``TEST_WORKERS``
   pytest-xdist workers (2 by default; ``TEST_WORKERS=1`` runs the whole suite in one process,
   in one pass). Each worker has a test database of its own and, on Redis, keys of its own
   (tests/settings.py);
2. the **serial** pass: the tests in ``SERIAL``, after the parallel pass: they start whole sites,
   servers, Celery workers and Chromium, whose timing would suffer from sharing the two cores
   with the parallel pass. They spend most of their time waiting (for a browser, a process
   start, a socket), so they run on ``SERIAL_WORKERS`` pytest-xdist workers (2 by default),
   each test module whole on one worker (``--dist loadfile``): a module's tests never run at
   once, and a worker's processes inherit its database and Redis keys (tests/settings.py), as
   in the parallel pass. ``SERIAL_WORKERS=1`` runs them one at a time.

Which tests run in which mode: every test runs in both modes (embedded and production) unless
it is **mode-independent**: pure code (policies, parsing, metrics, templates, scenario
generation) that touches no database, Redis, worker, socket, setting or browser. Those are
listed in ``MODE_INDEPENDENT`` (or marked ``@pytest.mark.mode_independent``), and CI's second
mode skips them (``--skip-mode-independent``). A new test is not listed, so it runs in both.
``tests/conftest.py`` refuses a mode-independent test that asks for the database, a client,
``settings`` or a live server. See CONTRIBUTING.md, "Tests".
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence

import pytest

# Paths relative to the repository root: a directory (with a trailing "/") or a test module.
MODE_INDEPENDENT: tuple[str, ...] = (
    "tests/agents/policies/",
    "tests/agents/test_embedded_reply.py",
    "tests/architecture/",
    "tests/evaluation/test_checks.py",
    "tests/evaluation/test_format_v2.py",
    "tests/evaluation/test_honest_metrics.py",
    "tests/evaluation/test_metrics.py",
    "tests/evaluation/test_real_signals.py",
    "tests/evaluation/test_scenarios.py",
    "tests/evaluation/test_understanding_corpora.py",
    "tests/evaluation/test_users.py",
    "tests/lib/test_env.py",
    "tests/lib/test_markdown.py",
    "tests/lib/test_textdiff.py",
    "tests/lib/test_ytext_typing.py",
    "tests/memory/test_extractors.py",
)

SERIAL: tuple[str, ...] = (
    "tests/browser/",
    "tests/reliability/",
    # Whole sites (tests/realtime/live.py: Daphne processes on the product's settings).
    "tests/realtime/test_live_documents.py",
    "tests/realtime/test_token_throttling.py",
    # Real Celery workers and servers started beside the test (tests/processes.py): their
    # Redis keys are the worker's own, but their timing (one turn while another streams) is
    # what these tests check, and they would share two cores with the parallel pass.
    "tests/agents/test_redis_outage.py",
    "tests/agents/test_worker.py",
    "tests/core/test_worker_command.py",
    "tests/evaluation/test_app_engine_worker.py",
    "tests/memory/test_sessions_worker.py",
    "tests/realtime/test_chat_across_processes.py",
)

# What a mode-independent test may not use: the database, the settings, a client, a server.
MODE_DEPENDENT_FIXTURES = frozenset(
    {
        "db",
        "transactional_db",
        "django_db_reset_sequences",
        "django_db_serialized_rollback",
        "django_db_setup",
        "settings",
        "client",
        "async_client",
        "admin_client",
        "admin_user",
        "django_user_model",
        "live_server",
        "rf",
        "async_rf",
    }
)

EXIT_NO_TESTS = pytest.ExitCode.NO_TESTS_COLLECTED


def _path(item: pytest.Item) -> str:
    return item.path.relative_to(item.config.rootpath).as_posix()


def _listed(item: pytest.Item, paths: Sequence[str]) -> bool:
    path = _path(item)
    return any(path == p or (p.endswith("/") and path.startswith(p)) for p in paths)


def is_serial(item: pytest.Item) -> bool:
    return item.get_closest_marker("serial") is not None or _listed(item, SERIAL)


def is_mode_independent(item: pytest.Item) -> bool:
    return item.get_closest_marker("mode_independent") is not None or _listed(
        item, MODE_INDEPENDENT
    )


def mode_dependence(item: pytest.Item) -> list[str]:
    """Why ``item`` depends on the mode: the fixtures and markers of the list above it uses."""
    reasons = sorted(MODE_DEPENDENT_FIXTURES & set(getattr(item, "fixturenames", ())))
    reasons += [
        f"@{name}" for name in ("django_db", "browser", "redis") if item.get_closest_marker(name)
    ]
    return reasons


def select(
    items: list[pytest.Item], *, part: str, skip_mode_independent: bool
) -> list[pytest.Item]:
    """The items of this pass, in their order; raises ``pytest.UsageError`` for a test listed as
    mode-independent that is not."""
    wrong = [
        f"{item.nodeid}: {', '.join(why)}"
        for item in items
        if is_mode_independent(item) and (why := mode_dependence(item))
    ]
    if wrong:
        raise pytest.UsageError(
            "mode-independent tests that use the database, settings, a client or a server "
            "(take them out of tests/suite.py MODE_INDEPENDENT):\n  " + "\n  ".join(wrong)
        )
    kept = []
    for item in items:
        if skip_mode_independent and is_mode_independent(item):
            continue
        if part == "parallel" and is_serial(item):
            continue
        if part == "serial" and not is_serial(item):
            continue
        kept.append(item)
    return kept


def _workers(name: str = "TEST_WORKERS") -> int:
    value = os.environ.get(name, "2")
    try:
        workers = int(value)
    except ValueError:
        raise SystemExit(f"{name} must be a whole number, not {value!r}") from None
    return max(workers, 1)


def _xdist(workers: int) -> list[str]:
    return ["-p", "xdist", "-n", str(workers), "--dist", "loadfile"] if workers > 1 else []


def passes(workers: int, serial_workers: int = 1) -> list[list[str]]:
    if workers == 1:
        return [[]]
    return [
        [*_xdist(workers), "--suite-part", "parallel"],
        [*_xdist(serial_workers), "--suite-part", "serial"],
    ]


def combined(codes: Sequence[int]) -> int:
    """One exit status for the passes: the first failure's; 5 only if no pass ran a test."""
    ran = [code for code in codes if code != EXIT_NO_TESTS]
    if not ran:
        return int(EXIT_NO_TESTS)
    return next((code for code in ran if code != 0), 0)


def main(argv: Sequence[str]) -> int:
    codes = []
    for extra in passes(_workers(), _workers("SERIAL_WORKERS")):
        command = [sys.executable, "-m", "pytest", *extra, *argv]
        print("+", " ".join(command[1:]), flush=True)
        codes.append(subprocess.call(command))
    return combined(codes)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
