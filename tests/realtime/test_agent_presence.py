"""Agents in the presence list: a running turn's awareness entry reaches the document's rooms
through the relay, is renewed, carries a cursor while the agent types, and is cleared after."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from django.db import connection

from agents.outbox import presence
from collab.realtime import relay, yprotocol
from collab.tasks.models import Task

pytestmark = pytest.mark.django_db(transaction=True)


def _in_worker_thread(func: Any) -> Any:
    """Run ``func`` like the embedded Celery worker would: a thread of its own."""

    def call() -> Any:
        try:
            return func()
        finally:
            connection.close()

    return asyncio.to_thread(call)


def test_an_agents_client_id_is_stable_and_fits_yjs() -> None:
    ids = {presence.agent_client_id(agent_id) for agent_id in range(1, 200)}

    assert presence.agent_client_id(7) == presence.agent_client_id(7)
    assert len(ids) == 199
    assert all(0 < client_id < 2**32 for client_id in ids)


async def test_an_agent_appears_in_the_presence_of_open_editors_and_leaves(
    connect, alice, task: Task
) -> None:
    client = await connect(alice, task)
    agent_client = presence.agent_client_id(42)

    await _in_worker_thread(
        lambda: presence.show(
            turn_id=9, agent_id=42, name="Mira", colour="#6b5bd6", document_id=task.document.pk
        )
    )
    await client.wait_for(lambda: agent_client in client.awareness)
    state = json.loads(client.awareness[agent_client])
    assert state["user"] == {
        "name": "Mira",
        "color": "#6b5bd6",
        "colorLight": "#6b5bd633",
        "kind": "agent",
        "role": "agent",
    }
    assert state["collab"] == {"agent": "Mira", "agent_id": 42, "turn_id": 9}

    await _in_worker_thread(lambda: presence.hide(9))
    await client.wait_for(lambda: client.awareness.get(agent_client) == "null")
    await client.close()


async def test_editors_echoing_the_agents_entry_cannot_keep_it_alive(
    connect, alice, bob, task: Task
) -> None:
    alice_client = await connect(alice, task)
    bob_client = await connect(bob, task)
    agent_client = presence.agent_client_id(42)
    await _in_worker_thread(
        lambda: presence.show(
            turn_id=9, agent_id=42, name="Mira", colour="#6b5bd6", document_id=task.document.pk
        )
    )
    await alice_client.wait_for(lambda: agent_client in alice_client.awareness)
    shown = json.loads(alice_client.awareness[agent_client])
    clock = max(e.clock for e in _entries(alice_client.received) if e.client_id == agent_client)

    # y-websocket clients re-send every awareness change they receive, others' included
    echo = yprotocol.AwarenessEntry(agent_client, clock, json.dumps(shown))
    await alice_client.send(yprotocol.awareness(yprotocol.encode_awareness_update([echo])))
    await alice_client.pump(0.2)
    await _in_worker_thread(lambda: presence.hide(9))
    await bob_client.wait_for(lambda: bob_client.awareness.get(agent_client) == "null")
    # a late echo of the old state does not bring the agent back
    await alice_client.send(yprotocol.awareness(yprotocol.encode_awareness_update([echo])))
    await bob_client.pump(0.3)

    assert bob_client.awareness.get(agent_client) == "null"
    await alice_client.close()
    await bob_client.close()


def _entries(frames: list[bytes]) -> list[yprotocol.AwarenessEntry]:
    found = []
    for frame in frames:
        message = yprotocol.parse_message(frame)
        if isinstance(message, yprotocol.AwarenessMessage):
            found += message.entries
    return found


async def test_a_late_joiner_sees_the_working_agent(connect, alice, bob, task: Task) -> None:
    first = await connect(alice, task)  # the room is loaded
    await _in_worker_thread(
        lambda: presence.show(
            turn_id=9, agent_id=42, name="Mira", colour="#6b5bd6", document_id=task.document.pk
        )
    )
    agent_client = presence.agent_client_id(42)
    await first.wait_for(lambda: agent_client in first.awareness)

    late = await connect(bob, task)
    await late.wait_for(lambda: agent_client in late.awareness)

    await _in_worker_thread(lambda: presence.hide(9))
    await first.close()
    await late.close()


async def test_the_agents_cursor_is_a_relative_position_in_the_document(
    connect, alice, task: Task
) -> None:
    from collab.tasks import documents

    client = await connect(alice, task)
    agent_client = presence.agent_client_id(42)

    def type_and_move() -> None:
        presence.show(
            turn_id=9, agent_id=42, name="Mira", colour="#6b5bd6", document_id=task.document.pk
        )
        documents.apply_text_edit(task=task, new_text="Hello 京都 world", author_label="Mira")
        state = documents.read_document(task=task).state
        presence.move_cursor(9, state=state, index=len("Hello 京都"))

    await _in_worker_thread(type_and_move)
    await client.wait_for(
        lambda: "cursor" in (json.loads(client.awareness.get(agent_client, "null")) or {})
    )
    cursor = json.loads(client.awareness[agent_client])["cursor"]
    assert cursor["anchor"] == cursor["head"]
    assert set(cursor["anchor"]) == {"type", "tname", "item", "assoc"}
    assert set(cursor["anchor"]["item"]) == {"client", "clock"}
    # it points just after what the agent wrote
    from pycrdt import StickyIndex

    from collab.lib import ytext

    _doc, text = ytext.doc_from_updates(
        (await _in_worker_thread(lambda: documents.read_document(task=task))).state
    )
    index = StickyIndex.from_json(cursor["anchor"], text).get_index()
    assert index == ytext.utf8_offset("Hello 京都 world", len("Hello 京都"))

    await _in_worker_thread(lambda: presence.hide(9))
    await client.close()


def test_a_cursor_at_the_end_of_the_text_is_the_end_of_the_type(
    monkeypatch: pytest.MonkeyPatch, task: Task
) -> None:
    from collab.lib import ytext

    sent: list[bytes] = []
    monkeypatch.setattr(relay, "publish_awareness", lambda doc, update: sent.append(update))
    presence.show(
        turn_id=9, agent_id=42, name="Mira", colour="#6b5bd6", document_id=task.document.pk
    )
    doc, text = ytext.new_doc()
    text.insert(0, "All done 🌸")

    presence.move_cursor(9, state=doc.get_update(), index=len("All done 🌸"))
    presence.hide(9)

    state = json.loads(yprotocol.parse_awareness_update(sent[1])[0].state_json)
    # every field of a Yjs RelativePosition, as y-codemirror.next reads it without parsing
    assert state["cursor"]["anchor"] == {"type": None, "tname": "content", "item": None, "assoc": 0}


def test_renewals_wait_for_their_interval_and_clocks_only_go_up(
    monkeypatch: pytest.MonkeyPatch, task: Task
) -> None:
    sent: list[tuple[int, bytes]] = []
    monkeypatch.setattr(relay, "publish_awareness", lambda doc, update: sent.append((doc, update)))

    presence.show(
        turn_id=9, agent_id=42, name="Mira", colour="#6b5bd6", document_id=task.document.pk
    )
    presence.renew(9)  # too soon: nothing
    presence.renew(9, force=True)
    presence.hide(9)
    presence.hide(9)  # already gone: nothing

    entries = [yprotocol.parse_awareness_update(update)[0] for _, update in sent]
    assert [doc for doc, _ in sent] == [task.document.pk] * 3
    assert [entry.removed for entry in entries] == [False, False, True]
    assert entries[0].clock < entries[1].clock < entries[2].clock


def test_in_production_awareness_goes_through_redis_without_a_sequence_number(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    published: list[tuple[str, bytes]] = []

    class FakeRedis:
        def publish(self, channel: str, message: bytes) -> None:
            published.append((channel, message))

    settings.REDIS_URL = "redis://127.0.0.1:6379/15"
    monkeypatch.setattr(relay, "_sync_client", FakeRedis())

    relay.publish_awareness(7, b"aw")

    [(channel, message)] = published
    assert channel.endswith(".7")
    assert relay.decode(message) == (relay.KIND_AWARENESS, relay._sync_sender, 0, b"aw")
