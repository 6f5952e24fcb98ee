"""Guessing API tokens over WebSocket handshakes is throttled like the HTTP API: each bad token
counts as a failure for the client's address (django-axes), and a locked-out address is closed
with 4429 even with a valid token, while other addresses still connect."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
import websockets
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.test import override_settings
from django.test.utils import CaptureQueriesContext
from websockets.exceptions import ConnectionClosed, InvalidStatus

from collab.accounts.services import create_api_token
from collab.asgi import application
from collab.realtime.auth import _authenticate
from collab.realtime.consumers import CloseCode
from collab.tasks.models import Task
from tests.realtime.conftest import WAIT, Socket
from tests.realtime.live import LiveSite, migrated_template

LIMIT = settings.AXES_FAILURE_LIMIT
GUESSER = "203.0.113.50"
ELSEWHERE = "198.51.100.9"
PROXY = "10.0.0.2"


def _token(user: User) -> str:
    return create_api_token(user=user, name="robot").token


async def _handshake(
    task: Task,
    token: str,
    address: str,
    *,
    forwarded_for: str | None = None,
    socket_path: str = "chat?format=json",
) -> tuple[bool, int | None]:
    """``(accepted, close code)`` of a handshake (the chat's unless ``socket_path``) with
    ``token`` from ``address``."""
    headers = [(b"authorization", f"Bearer {token}".encode())]
    if forwarded_for is not None:
        headers.append((b"x-forwarded-for", forwarded_for.encode()))
    socket = Socket(application, f"/ws/tasks/{task.pk}/{socket_path}", headers=headers)
    socket.scope["client"] = [address, 50000]
    accepted, code = await socket.connect(timeout=WAIT)
    if not accepted:
        return False, code
    if await socket.receive_nothing(timeout=0.2):
        await socket.disconnect()
        return True, None
    output = await socket.receive_output(timeout=WAIT)
    assert output["type"] == "websocket.close", output
    return True, int(output.get("code", 1000))


@pytest.mark.django_db(transaction=True)
async def test_guessing_tokens_locks_the_address_out_even_for_a_valid_token(
    alice: User, task: Task
) -> None:
    real = await database_sync_to_async(_token)(alice)
    assert await _handshake(task, real, GUESSER) == (True, None)  # before: it connects

    for n in range(LIMIT):
        accepted, code = await _handshake(task, f"collab_guess{n}", GUESSER)
        assert not accepted
        assert code == CloseCode.NOT_FOUND

    # Locked: the valid token is refused with the documented code, and no consumer ran.
    assert await _handshake(task, real, GUESSER) == (True, CloseCode.TOO_MANY_ATTEMPTS)
    # Another guess from there is refused the same way (a locked guesser learns nothing).
    assert await _handshake(task, "collab_guess_more", GUESSER) == (
        True,
        CloseCode.TOO_MANY_ATTEMPTS,
    )
    # Another address is not affected.
    assert await _handshake(task, real, ELSEWHERE) == (True, None)


@pytest.mark.django_db(transaction=True)
async def test_guesses_on_one_socket_lock_the_address_out_of_the_document_socket_too(
    alice: User, task: Task
) -> None:
    real = await database_sync_to_async(_token)(alice)
    for n in range(LIMIT):
        await _handshake(task, f"collab_guess{n}", GUESSER)

    locked = await _handshake(task, real, GUESSER, socket_path="doc")
    assert locked == (True, CloseCode.TOO_MANY_ATTEMPTS)


@pytest.mark.django_db(transaction=True)
async def test_fewer_guesses_than_the_limit_do_not_lock(alice: User, task: Task) -> None:
    real = await database_sync_to_async(_token)(alice)
    for n in range(LIMIT - 1):
        await _handshake(task, f"collab_guess{n}", GUESSER)

    assert await _handshake(task, real, GUESSER) == (True, None)


@pytest.mark.django_db(transaction=True)
@override_settings(TRUSTED_PROXIES=[PROXY])
async def test_behind_a_trusted_proxy_the_forwarded_client_is_locked_not_the_proxy(
    alice: User, task: Task
) -> None:
    real = await database_sync_to_async(_token)(alice)
    for n in range(LIMIT):
        await _handshake(task, f"collab_guess{n}", PROXY, forwarded_for=GUESSER)

    locked = await _handshake(task, real, PROXY, forwarded_for=GUESSER)
    assert locked == (True, CloseCode.TOO_MANY_ATTEMPTS)
    # Another client behind the same proxy still connects.
    assert await _handshake(task, real, PROXY, forwarded_for=ELSEWHERE) == (True, None)


@pytest.mark.django_db(transaction=True)
async def test_an_untrusted_peer_cannot_dodge_the_lockout_with_forwarded_for(
    alice: User, task: Task
) -> None:
    real = await database_sync_to_async(_token)(alice)
    for n in range(LIMIT):
        await _handshake(task, f"collab_guess{n}", GUESSER, forwarded_for=f"192.0.2.{n}")

    locked = await _handshake(task, real, GUESSER, forwarded_for="192.0.2.200")
    assert locked == (True, CloseCode.TOO_MANY_ATTEMPTS)


def _scope(address: str) -> dict[str, Any]:
    return {"type": "websocket", "path": "/ws/tasks/1/chat", "client": [address, 50000]}


@pytest.mark.django_db
def test_a_valid_tokens_handshake_makes_one_query_when_nothing_is_locked(
    alice: User, django_assert_num_queries: Any
) -> None:
    real = _token(alice)
    _authenticate(_scope(GUESSER), real)  # first use records last_used_at (one update)

    with django_assert_num_queries(1):  # the token lookup, carrying the failure count
        assert _authenticate(_scope(GUESSER), real) == alice


@pytest.mark.django_db
def test_a_bad_tokens_handshake_pays_for_the_lockout_check_and_the_record() -> None:
    # The counter-example: the count above would see any query added to the handshake.
    with CaptureQueriesContext(connection) as queries:
        assert _authenticate(_scope(GUESSER), "collab_not-a-token") is None
    assert len(queries) > 1


@pytest.mark.timeout(120)
def test_under_daphne_a_locked_address_sees_close_code_4429(tmp_path: Path) -> None:
    """What a real client sees: bad tokens are refused (HTTP 403), then even a valid token's
    socket opens and closes at once with 4429."""
    site = LiveSite(tmp_path / "site", settings={"LOGIN_FAILURE_LIMIT": "3"})
    try:
        cast = site.prepare(migrated_template(tmp_path / "template"))
        url = site.start().url(cast.task_id)
        real = cast.tokens["alice"]

        async def scenario() -> int | None:
            for n in range(3):
                with pytest.raises(InvalidStatus) as refused:
                    await websockets.connect(
                        url, additional_headers={"Authorization": f"Bearer collab_guess{n}"}
                    )
                assert refused.value.response.status_code == 403
            async with websockets.connect(
                url, additional_headers={"Authorization": f"Bearer {real}"}
            ) as ws:
                with pytest.raises(ConnectionClosed):
                    await asyncio.wait_for(ws.recv(), timeout=WAIT)
                return ws.close_code

        assert asyncio.run(scenario()) == CloseCode.TOO_MANY_ATTEMPTS
    finally:
        site.close()
