"""Real Daphne processes: the npm Yjs/y-websocket client next to a Python client, two web
processes relaying through Redis, and a SIGKILL of the web process."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.realtime.live import (
    TEST_REDIS_URL,
    LiveSite,
    migrated_template,
    redis_available,
)
from tests.realtime.nodejs import NodeClient, node_workdir
from tests.realtime.yclient import LiveYClient

pytestmark = pytest.mark.timeout(180)

SEED = "ñ😀β 日本 e\u0301!\n"


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return migrated_template(tmp_path_factory.mktemp("live-template"))


@pytest.fixture(scope="session")
def node() -> Path:
    return node_workdir()


@pytest.fixture
def redis_url() -> str:
    if not redis_available():
        if os.environ.get("CI") == "true":
            pytest.fail(f"Redis is needed at {TEST_REDIS_URL}")
        pytest.skip("no Redis for the multi-process tests")
    return TEST_REDIS_URL


def _site(tmp_path: Path, template: Path, **kwargs) -> Iterator[LiveSite]:
    site = LiveSite(tmp_path / "site", **kwargs)
    try:
        yield site
    finally:
        site.close()


@pytest.fixture
def embedded_site(tmp_path: Path, template: Path) -> Iterator[LiveSite]:
    yield from _site(tmp_path, template)


@pytest.fixture
def redis_site(tmp_path: Path, template: Path, redis_url: str) -> Iterator[LiveSite]:
    # Catch-up is slowed down so that only the relay can deliver updates in time.
    yield from _site(
        tmp_path, template, redis_url=redis_url, settings={"DOCUMENT_CATCHUP_SECONDS": "60"}
    )


async def test_npm_yjs_client_and_python_client_co_edit_non_ascii_text(
    embedded_site, template, node
):
    site = embedded_site
    cast = site.prepare(template, text=SEED)
    server = site.start()
    base = server.url(cast.task_id).removesuffix("/doc")

    js = await NodeClient.start(node, base, cast.tokens["bob"])
    py = LiveYClient(server.url(cast.task_id), cast.tokens["alice"])
    try:
        assert (await js.command(op="wait_synced"))["text"] == SEED
        assert await py.connect()
        await py.wait_for(lambda: py.value == SEED)

        # given both clients insert next to emoji, CJK and a combining accent
        assert (await js.command(op="insert_after", anchor="😀", text="[js👍]"))["ok"]
        assert (await js.command(op="insert_after", anchor="e\u0301", text="✓"))["ok"]
        await py.insert(SEED.index("日本") + 2, "[py🐍]")
        expected = "ñ😀[js👍]β 日本[py🐍] e\u0301✓!\n"

        # then both converge on the same text, with every insertion where it was meant to be
        assert (await js.command(op="wait_text", text=expected))["ok"]
        await py.wait_for(lambda: py.value == expected)

        # when a server-side edit (another process, no event loop) inserts after an anchor
        site.manage("anchor", str(cast.task_id), "agent:Scribe", "β", " 🎌漢字")
        expected = "ñ😀[js👍]β 🎌漢字 日本[py🐍] e\u0301✓!\n"
        assert (await js.command(op="wait_text", text=expected))["ok"]
        await py.wait_for(lambda: py.value == expected)
        await py.wait_for(lambda: py.acknowledged)
        await asyncio.sleep(0.3)  # the Node client's last batch
        assert site.texts(cast.document_id) == {"column": expected, "log": expected}
    finally:
        await js.close()
        await py.close()


async def test_npm_client_of_a_viewer_is_told_and_its_edits_are_dropped(
    embedded_site, template, node
):
    site = embedded_site
    cast = site.prepare(template, text="read me")
    server = site.start()
    js = await NodeClient.start(
        node, server.url(cast.task_id).removesuffix("/doc"), cast.tokens["carol"]
    )
    py = LiveYClient(server.url(cast.task_id), cast.tokens["alice"])
    try:
        await js.command(op="wait_synced")
        assert await py.connect()
        await py.wait_for(lambda: py.value == "read me")

        await js.command(op="insert", index=0, text="defaced ")
        await asyncio.sleep(0.5)
        await py.pump(0.2)

        state = await js.command(op="get")
        assert any("Permission denied" in line for line in state["denied"])
        assert py.value == "read me"
        assert site.texts(cast.document_id)["column"] == "read me"
    finally:
        await js.close()
        await py.close()


async def test_clients_on_two_web_processes_converge_through_redis(redis_site, template, node):
    site = redis_site
    cast = site.prepare(template)
    first, second = site.start(), site.start()
    py = LiveYClient(first.url(cast.task_id), cast.tokens["alice"])
    other = LiveYClient(second.url(cast.task_id), cast.tokens["bob"])
    js = await NodeClient.start(
        node, second.url(cast.task_id).removesuffix("/doc"), cast.tokens["bob"]
    )
    try:
        assert await py.connect()
        assert await other.connect()
        await js.command(op="wait_synced")

        await py.insert(0, "from process one 🅰\n")
        await other.wait_for(lambda: "process one" in other.value)
        await other.insert(len(other.value), "from process two 🅱\n")
        await py.wait_for(lambda: "process two" in py.value)
        assert (await js.command(op="wait_contains", text="process two 🅱"))["ok"]

        # a worker-style edit (sync Redis publish) reaches the rooms of both processes
        site.manage("anchor", str(cast.task_id), "agent:Scribe", "", "from a worker 🤖\n")
        await py.wait_for(lambda: "worker" in py.value)
        await other.wait_for(lambda: "worker" in other.value)

        # and presence crosses processes too
        await py.set_awareness(1, '{"user":{"name":"alice"}}')
        await other.wait_for(lambda: py.doc.client_id in other.awareness)

        await py.wait_for(lambda: py.acknowledged)
        await other.wait_for(lambda: other.acknowledged)
        assert py.value == other.value
        assert (await js.command(op="get"))["text"] == py.value
        await asyncio.sleep(0.3)
        assert site.texts(cast.document_id)["column"] == py.value
    finally:
        await js.close()
        await py.close()
        await other.close()


async def test_killing_the_web_process_loses_no_acknowledged_update(embedded_site, template):
    site = embedded_site
    cast = site.prepare(template)
    server = site.start()
    py = LiveYClient(server.url(cast.task_id), cast.tokens["alice"])
    assert await py.connect()
    await py.wait_for(lambda: py.server_state is not None and bool(py.received))

    # given a client that types, each keystroke sent as its own update
    for index, char in enumerate("durable ✓ 日本語 "):
        await py.insert(index, char)
    await py.wait_for(lambda: py.acknowledged)
    acknowledged = py.value
    await py.insert(len(py.value), "maybe lost")

    # when the web process is killed without any chance to flush
    server.kill()
    await py.close()
    restarted = site.start(port=server.port)

    # then a new client sees every acknowledged update, once
    again = LiveYClient(restarted.url(cast.task_id), cast.tokens["bob"])
    try:
        assert await again.connect()
        await again.wait_for(lambda: again.value.startswith(acknowledged))
        assert again.value.count("durable") == 1
        assert site.texts(cast.document_id)["log"].startswith(acknowledged)
    finally:
        await again.close()


async def test_a_server_side_edit_while_someone_types_keeps_both(embedded_site, template):
    site = embedded_site
    cast = site.prepare(template, text="Title\n\nBody\n")
    server = site.start()
    py = LiveYClient(server.url(cast.task_id), cast.tokens["alice"])
    try:
        assert await py.connect()
        await py.wait_for(lambda: py.value == "Title\n\nBody\n")

        typed = "typing while the agent writes 😀"
        editing = asyncio.create_task(
            asyncio.to_thread(
                site.manage, "anchor", str(cast.task_id), "agent:Scribe", "Title\n", "Agent 🤖\n"
            )
        )
        for char in typed:
            await py.insert(len(py.value), char)
            await py.pump(0.01)
        await editing

        await py.wait_for(lambda: "Agent 🤖" in py.value)
        assert py.value == "Title\nAgent 🤖\n\nBody\n" + typed
        await py.wait_for(lambda: py.acknowledged)
        await asyncio.sleep(0.3)
        assert site.texts(cast.document_id)["column"] == py.value
    finally:
        await py.close()


async def test_an_edit_typed_live_reaches_the_npm_client_exactly_while_people_type(
    embedded_site, template, node
):
    site = embedded_site
    cast = site.prepare(template, text=SEED)
    server = site.start()
    base = server.url(cast.task_id).removesuffix("/doc")
    js = await NodeClient.start(node, base, cast.tokens["bob"])
    py = LiveYClient(server.url(cast.task_id), cast.tokens["alice"])
    try:
        assert (await js.command(op="wait_synced"))["text"] == SEED
        assert await py.connect()
        await py.wait_for(lambda: py.value == SEED)

        # when the agent types "β 日本" over as emoji and CJK, a few characters per update,
        # while alice types at the end and bob after the first emoji
        replacement = "β 東京 👩‍💻🏳️‍🌈 ok"
        typing = asyncio.create_task(
            asyncio.to_thread(
                site.manage, "type", str(cast.task_id), "agent:Scribe", "β 日本", replacement
            )
        )
        assert (await js.command(op="insert_after", anchor="😀", text="[js]"))["ok"]
        for char in "[py✓]":
            await py.insert(len(py.value), char)
            await py.pump(0.01)
        steps = int((await typing).strip())

        # then everyone ends with every change, and the agent's text exactly as written
        expected = "ñ😀[js]" + replacement + " e\u0301!\n[py✓]"
        assert steps > 3
        assert (await js.command(op="wait_text", text=expected))["ok"]
        await py.wait_for(lambda: py.value == expected)
        await py.wait_for(lambda: py.acknowledged)
        await asyncio.sleep(0.3)  # the Node client's last batch
        assert site.texts(cast.document_id) == {"column": expected, "log": expected}
    finally:
        await js.close()
        await py.close()
