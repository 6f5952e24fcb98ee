"""Issue 28, against real servers in the session's mode (embedded, or PostgreSQL + Redis): the
official Yjs client (tests/realtime/node) sending what the room must refuse, and a chat socket
opened while Redis is down."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
import websockets

from tests.realtime.live import LiveSite, migrated_template
from tests.realtime.nodejs import NodeClient, node_workdir
from tests.realtime.yclient import LiveYClient
from tests.reliability.conftest import PrivateRedis, live_site

pytestmark = pytest.mark.timeout(240)

WAIT = 20
SEED = "a😀b and 日本\n"


@pytest.fixture(scope="session")
def node() -> Path:
    return node_workdir()


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated SQLite database to copy (embedded mode; PostgreSQL sites migrate)."""
    return migrated_template(tmp_path_factory.mktemp("refused-template"))


async def _node(node: Path, site_url: str, token: str) -> NodeClient:
    client = await NodeClient.start(node, site_url.removesuffix("/doc"), token)
    assert (await client.command(op="wait_synced"))["ok"]
    return client


async def _stored(site: LiveSite, document_id: int, expected: str) -> dict[str, str]:
    """The stored texts once they read ``expected`` (or whatever they hold after ``WAIT``)."""
    deadline = time.monotonic() + WAIT
    while True:
        texts = await asyncio.to_thread(site.texts, document_id)
        if texts == {"column": expected, "log": expected} or time.monotonic() > deadline:
            return texts
        await asyncio.sleep(0.2)


@pytest.mark.parametrize(
    "cut",
    [
        pytest.param({"op": "delete", "index": 2, "length": 1}, id="deleting-its-second-half"),
        pytest.param({"op": "insert", "index": 2, "text": "X"}, id="inserting-between-its-halves"),
    ],
)
async def test_an_update_that_splits_an_emoji_is_refused_and_no_replica_diverges(
    site: LiveSite, node: Path, template: Path, cut: dict[str, Any]
) -> None:
    cast = site.prepare(template, text=SEED)
    server = site.start()
    url = server.url(cast.task_id)
    writer = await _node(node, url, cast.tokens["bob"])
    peer = await _node(node, url, cast.tokens["alice"])
    fresh: NodeClient | None = None
    try:
        # when a Yjs client cuts the emoji in two (UTF-16 index 2 is between its halves)
        await writer.command(**cut)

        # then its socket is closed as for any update the document must not take
        assert (await writer.command(op="wait_closed", timeout=WAIT * 1000))["code"] == 4400
        # and the others go on with one text: a live peer, a fresh client, the stored text
        assert (await peer.command(op="insert_after", anchor="and", text=" ✓"))["ok"]
        expected = "a😀b and ✓ 日本\n"
        assert (await peer.command(op="wait_text", text=expected))["ok"]
        fresh = await _node(node, url, cast.tokens["carol"])
        assert (await fresh.command(op="wait_text", text=expected))["ok"]
        assert await _stored(site, cast.document_id, expected) == {
            "column": expected,
            "log": expected,
        }
    finally:
        for client in (writer, peer, fresh):
            if client is not None:
                await client.close()


async def test_after_a_refused_too_large_update_later_edits_do_not_reach_the_stored_text_alone(
    site: LiveSite, node: Path, template: Path
) -> None:
    # A small limit, and a quick keep-alive: its sync step 1 makes the writer's client send its
    # state again, which is refused again, and that second refusal shows the server has read
    # everything the writer sent before it.
    site.settings.update(DOCUMENT_MAX_BYTES="20000", DOCUMENT_KEEPALIVE_SECONDS="1")
    cast = site.prepare(template, text="start\n")
    server = site.start()
    url = server.url(cast.task_id)
    writer = await _node(node, url, cast.tokens["bob"])
    alice = LiveYClient(url, cast.tokens["alice"])
    fresh: NodeClient | None = None
    try:
        assert await alice.connect()
        await alice.wait_for(lambda: alice.value == "start\n", timeout=WAIT)

        # given an update the server refuses (over the size limit)
        await writer.command(op="insert", index=6, text="x" * 30_000)
        state = await _wait_denied(writer, 1)
        assert state["denied"][0].count("document too large") == 1
        # when the same client types on: its update's structs follow the refused ones
        await writer.command(op="insert", index=0, text="hidden ")
        await _wait_denied(writer, 2)  # the server has read it

        # and an editor alongside types and is acknowledged (a batch with the text is written)
        await alice.insert(len(alice.value), "seen\n")
        await alice.wait_for(lambda: alice.acknowledged, timeout=WAIT)

        # then what a fresh client syncs, the stored text and the update log all agree
        expected = "start\nseen\n"
        fresh = await _node(node, url, cast.tokens["carol"])
        assert (await fresh.command(op="wait_text", text=expected))["ok"]
        assert alice.value == expected
        assert await _stored(site, cast.document_id, expected) == {
            "column": expected,
            "log": expected,
        }
    finally:
        await alice.close()
        for client in (writer, fresh):
            if client is not None:
                await client.close()


async def _wait_denied(client: NodeClient, count: int) -> dict[str, Any]:
    deadline = time.monotonic() + WAIT
    while True:
        state = await client.command(op="get")
        if len(state["denied"]) >= count:
            return state
        assert time.monotonic() < deadline, f"the server refused {len(state['denied'])} updates"
        await asyncio.sleep(0.1)


async def test_a_chat_socket_opened_while_redis_is_down_is_told_to_come_back_later(
    tmp_path: Path, private_redis: PrivateRedis
) -> None:
    """docs/protocol.md, chat close codes: 4503, which the task page shows as "reconnecting"
    and retries (static/collab/chat.js), rather than a handshake answered with HTTP 500."""
    with live_site(tmp_path, redis_url=private_redis.url) as site:
        cast = site.prepare()
        server = site.start()
        chat = f"ws://127.0.0.1:{server.port}/ws/tasks/{cast.task_id}/chat?format=json"
        headers = {"Authorization": f"Bearer {cast.tokens['bob']}"}

        # when Redis goes away and a chat socket is opened
        private_redis.stop()
        async with websockets.connect(chat, additional_headers=headers) as socket:
            # then it is accepted and closed with "try again later"
            with pytest.raises(websockets.ConnectionClosed) as closed:
                await asyncio.wait_for(socket.recv(), WAIT)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 4503

        # and once Redis is back, a new socket is served as before
        private_redis.start()
        deadline = time.monotonic() + WAIT
        while True:
            async with websockets.connect(chat, additional_headers=headers) as socket:
                await socket.send('{"type": "ping"}')
                try:
                    answer = await asyncio.wait_for(socket.recv(), WAIT)
                except websockets.ConnectionClosed:
                    assert time.monotonic() < deadline, "the chat socket never came back"
                    await asyncio.sleep(0.5)
                    continue
            assert "pong" in str(answer)
            break
