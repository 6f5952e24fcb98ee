from __future__ import annotations

from collections.abc import Iterator

import pytest
from asgiref.sync import SyncToAsync
from channels.layers import channel_layers
from django.contrib.auth.models import User
from django.db import connections
from django.test import Client

from collab.tasks.models import Task
from collab.workspaces.models import Role, Workspace
from tests import factories, suite


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("collab", "the suite's passes (tests/suite.py)")
    group.addoption(
        "--suite-part",
        choices=("all", "parallel", "serial"),
        default="all",
        help="run only the tests of the parallel or the serial pass (default: all)",
    )
    group.addoption(
        "--skip-mode-independent",
        action="store_true",
        help="leave out the mode-independent tests (CI's second mode: they ran in the first)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    kept = suite.select(
        items,
        part=config.getoption("suite_part"),
        skip_mode_independent=config.getoption("skip_mode_independent"),
    )
    if len(kept) < len(items):
        chosen = set(kept)
        config.hook.pytest_deselected(items=[item for item in items if item not in chosen])
        items[:] = kept


@pytest.fixture(autouse=True)
def _fresh_channel_layer() -> Iterator[None]:
    """Every test gets its own channel layer instance.

    pytest-asyncio gives each test a new event loop, while ``get_channel_layer()`` keeps one
    layer per process. channels-redis binds its receive lock to the loop of the first pending
    ``receive()``; a receive left pending when a test's loop closes (a consumer or an access
    watcher that was never cancelled) keeps that lock, and the next test's receive fails with
    "bound to a different event loop" or hangs. A server has one loop for its life, so this is
    test isolation, not product behaviour.
    """
    yield
    channel_layers.backends.clear()


@pytest.fixture(autouse=True)
def _close_async_tests_connections() -> Iterator[None]:
    """After each test, the database connection of asgiref's sync thread is closed.

    An async test's ``sync_to_async`` calls (``database_sync_to_async`` too) run on one thread
    that outlives the test, and Django's connections are per thread: the connection that thread
    opened stays open after the test ends. On PostgreSQL the last one left open keeps the test
    database in use, and dropping it at the end of the run fails ("database test_test is being
    accessed by other users", seen after tests/realtime/test_chat_consumer.py in file order).
    The close runs on that thread itself, the only one that may close its connections.
    """
    yield
    executor = SyncToAsync.single_thread_executor
    if getattr(executor, "_threads", None):
        executor.submit(connections.close_all).result()


@pytest.fixture
def alice(db: None) -> User:
    return factories.make_user("alice")


@pytest.fixture
def bob(db: None) -> User:
    return factories.make_user("bob")


@pytest.fixture
def carol(db: None) -> User:
    return factories.make_user("carol")


@pytest.fixture
def mallory(db: None) -> User:
    return factories.make_user("mallory")


@pytest.fixture
def workspace(alice: User, bob: User, carol: User) -> Workspace:
    """Acme: alice owns it, bob edits, carol views."""
    workspace = factories.make_workspace(alice)
    factories.add_member(workspace, bob, Role.EDITOR)
    factories.add_member(workspace, carol, Role.VIEWER)
    return workspace


@pytest.fixture
def task(workspace: Workspace) -> Task:
    return factories.make_task(workspace)


def _client_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def as_user():
    """``as_user(alice)`` gives a test client logged in as that person."""
    return _client_for
