from __future__ import annotations

from collections.abc import Iterator

import pytest
from channels.layers import channel_layers
from django.contrib.auth.models import User
from django.test import Client

from collab.tasks.models import Task
from collab.workspaces.models import Role, Workspace
from tests import factories


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
