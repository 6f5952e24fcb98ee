"""Reliability with real processes (Daphne, and PostgreSQL + Redis in production mode): what
issue 15 found broken, tried the way a tester did, against real servers."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
import websockets

from collab.realtime import yprotocol
from tests.realtime.live import LiveSite
from tests.realtime.yclient import LiveYClient, parse_state_vector
from tests.reliability.conftest import live_site

pytestmark = pytest.mark.timeout(240)

WAIT = 20


async def _client(site: LiveSite, url: str, token: str) -> LiveYClient:
    client = LiveYClient(url, token)
    assert await client.connect()
    await client.wait_for(lambda: bool(client.received), timeout=WAIT)
    return client


async def test_a_nul_typed_on_a_real_server_is_saved_and_the_document_stays_savable(site):
    cast = site.prepare()
    server = site.start()
    bob = await _client(site, server.url(cast.task_id), cast.tokens["bob"])

    await bob.insert(0, "nul\x00here")
    await bob.wait_for(lambda: bob.acknowledged, timeout=WAIT)
    await bob.insert(0, "and then ")
    await bob.wait_for(lambda: bob.acknowledged, timeout=WAIT)

    texts = site.texts(cast.document_id)
    assert texts["column"] == "and then nul\ufffdhere"
    assert texts["log"] == "and then nul\x00here"
    await bob.close()


async def test_a_document_of_a_mebibyte_is_refused_at_the_edit_and_what_exists_still_opens(site):
    cast = site.prepare()
    server = site.start()
    bob = await _client(site, server.url(cast.task_id), cast.tokens["bob"])

    # two legal 600 kB edits: the second would take the document past the limit
    await bob.insert(0, "a" * 600_000)
    await bob.wait_for(lambda: bob.acknowledged, timeout=WAIT)
    await bob.insert(0, "b" * 600_000)
    await bob.wait_for(lambda: bool(bob.denied), timeout=WAIT)
    assert bob.denied[0].startswith("document too large")

    # a new client gets the whole document that exists (a sync step 2 of about 600 kB)
    alice = await _client(site, server.url(cast.task_id), cast.tokens["alice"])
    await alice.wait_for(lambda: alice.value == "a" * 600_000, timeout=WAIT)
    assert site.texts(cast.document_id)["column"] == "a" * 600_000
    await bob.close()
    await alice.close()


async def test_a_removed_member_s_silent_socket_is_closed(site):
    cast = site.prepare()
    server = site.start()
    bob = await _client(site, server.url(cast.task_id), cast.tokens["bob"])

    await asyncio.to_thread(site.manage, "remove", "bob")

    await bob.wait_for(lambda: bob.closed_with is not None, timeout=WAIT)
    assert bob.closed_with == 4403


async def test_revoking_a_token_closes_the_socket_opened_with_it(site):
    cast = site.prepare()
    server = site.start()
    bob = await _client(site, server.url(cast.task_id), cast.tokens["bob"])
    alice = await _client(site, server.url(cast.task_id), cast.tokens["alice"])

    await asyncio.to_thread(site.manage, "revoke", "bob")

    await bob.wait_for(lambda: bob.closed_with is not None, timeout=WAIT)
    assert bob.closed_with == 4403
    await alice.pump(0.5)
    assert alice.closed_with is None
    await alice.close()


async def test_a_viewer_s_css_colour_never_reaches_another_browser(site):
    cast = site.prepare()
    server = site.start()
    carol = await _client(site, server.url(cast.task_id), cast.tokens["carol"])
    alice = await _client(site, server.url(cast.task_id), cast.tokens["alice"])
    css = (
        "rgba(200,0,0,.85); position:fixed; top:0; left:0; width:100vw; height:100vh; z-index:99999"
    )

    await carol.set_awareness(1, json.dumps({"user": {"name": "carol", "color": css}}))
    await alice.wait_for(lambda: carol.doc.client_id in alice.awareness, timeout=WAIT)

    shown = json.loads(alice.awareness[carol.doc.client_id])
    assert re.fullmatch(r"#[0-9a-fA-F]{6}", shown["user"]["color"])
    huge = yprotocol.AwarenessEntry(carol.doc.client_id, 2, json.dumps({"x": "y" * 900_000}))
    await carol.send(yprotocol.awareness(yprotocol.encode_awareness_update([huge])))
    await carol.wait_for(lambda: carol.closed_with is not None, timeout=WAIT)
    assert carol.closed_with == 4413
    await alice.close()


async def test_killing_the_web_process_mid_typing_loses_nothing_acknowledged(site):
    cast = site.prepare()
    server = site.start()
    bob = await _client(site, server.url(cast.task_id), cast.tokens["bob"])
    for n in range(40):
        await bob.insert(len(bob.value), f"word{n} ")
        if n == 20:
            await bob.wait_for(lambda: bob.acknowledged, timeout=WAIT)
    typed = bob.value

    server.kill()  # SIGKILL mid-typing: no shutdown flush
    again = site.start()
    # The Yjs client keeps its state and resends what was not acknowledged on reconnect.
    state = bob.doc.get_update()
    returning = LiveYClient(again.url(cast.task_id), cast.tokens["bob"])
    returning.doc.apply_update(state)
    assert await returning.connect()
    bob_id, bob_clock = (
        bob.doc.client_id,
        parse_state_vector(bob.doc.get_state())[bob.doc.client_id],
    )
    await returning.wait_for(
        lambda: returning.server_state.get(bob_id, 0) >= bob_clock, timeout=WAIT
    )

    assert site.texts(cast.document_id)["column"] == typed
    assert site.texts(cast.document_id)["log"] == typed
    await returning.close()


class Typist:
    """A person typing words at the end of the document, reconnecting (with the Yjs state it
    holds, as the editor does) whenever the server closes the socket."""

    def __init__(self, url: str, token: str, prefix: str) -> None:
        self.url, self.token, self.prefix = url, token, prefix
        self.client = LiveYClient(url, token)
        self.words: list[str] = []

    async def connect(self) -> None:
        state = self.client.doc.get_update()
        while True:
            fresh = LiveYClient(self.url, self.token)
            fresh.doc.apply_update(state)
            try:
                if await fresh.connect():
                    self.client = fresh
                    return
            except OSError:
                pass
            await asyncio.sleep(0.5)

    async def listen(self, seconds: float) -> None:
        await self.client.pump(seconds)
        if self.client.closed_with is not None:
            await self.connect()

    async def type(self, count: int) -> None:
        for _ in range(count):
            word = f"{self.prefix}{len(self.words)}"
            await self.client.insert(len(self.client.value), word + " ")
            self.words.append(word)
            await self.listen(0.2)


async def test_redis_stopped_and_started_mid_typing_loses_and_duplicates_nothing(
    tmp_path, private_redis
):
    with live_site(tmp_path, redis_url=private_redis.url) as live:
        cast = live.prepare()
        one, two = live.start(), live.start()
        bob = Typist(one.url(cast.task_id), cast.tokens["bob"], "bob")
        alice = Typist(two.url(cast.task_id), cast.tokens["alice"], "alice")
        await bob.connect()
        await alice.connect()

        await asyncio.gather(bob.type(8), alice.type(8))
        private_redis.stop()  # the relay between the two processes is gone
        await asyncio.gather(bob.type(8), alice.type(8))
        private_redis.start()
        await asyncio.gather(bob.type(8), alice.type(8))

        # both editors converge on one text holding every word once, and that text is stored
        loop = asyncio.get_running_loop()
        deadline = loop.time() + 60
        while not (
            bob.client.value == alice.client.value
            and bob.client.acknowledged
            and alice.client.acknowledged
        ):
            assert loop.time() < deadline, (bob.client.value, alice.client.value)
            await asyncio.gather(bob.listen(0.3), alice.listen(0.3))
        shown = bob.client.value.split()
        assert sorted(shown) == sorted(bob.words + alice.words)
        await asyncio.sleep(1.0)  # the last batch reaches the database
        stored = live.texts(cast.document_id)
        assert sorted(stored["column"].split()) == sorted(shown)
        assert stored["log"] == stored["column"] == bob.client.value
        await bob.client.close()
        await alice.client.close()


async def _closed_with(url: str, token: str, frame: str | bytes) -> int:
    async with websockets.connect(
        url, additional_headers={"Authorization": f"Bearer {token}"}, max_size=None
    ) as socket:
        await socket.send(frame)
        try:
            while True:
                await asyncio.wait_for(socket.recv(), WAIT)
        except websockets.ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd else 1006


async def test_oversized_frames_close_with_the_codes_docs_protocol_md_gives(site):
    """docs/protocol.md, close codes: over 64 kB on the chat socket 4413; over Daphne's 1 MiB
    message limit, on either socket, the connection is dropped without a close frame (1006)."""
    cast = site.prepare()
    server = site.start()
    chat = f"ws://127.0.0.1:{server.port}/ws/tasks/{cast.task_id}/chat?format=json"
    token = cast.tokens["bob"]
    over_64_kb = json.dumps({"type": "chat.message", "body": "x" * 70_000})
    assert await _closed_with(chat, token, over_64_kb) == 4413
    over_1_mib = json.dumps({"type": "chat.message", "body": "x" * 1_100_000})
    assert await _closed_with(chat, token, over_1_mib) == 1006
    document_frame = yprotocol.sync_update(b"\x00" * 1_100_000)
    assert await _closed_with(server.url(cast.task_id), token, document_frame) == 1006
    assert site.texts(cast.document_id)["column"] == ""
