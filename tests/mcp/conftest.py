from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.browser.conftest import LiveServer


@pytest.fixture(scope="module")
def mcp_server(django_db_setup: None) -> Iterator[LiveServer]:
    """``manage.py serve`` (Daphne, as `make run` starts it) on this session's test database."""
    server = LiveServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
