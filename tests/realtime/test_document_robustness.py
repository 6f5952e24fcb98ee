"""The document socket under content a database, a frame limit or a browser cannot take as is:
NUL characters, documents near the size limit, and presence (awareness) states."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from channels.db import database_sync_to_async
from django.core.exceptions import ValidationError

from collab.lib.colors import presence_color
from collab.realtime import yprotocol
from collab.tasks import documents
from collab.tasks.models import Document
from tests import factories

pytestmark = pytest.mark.django_db(transaction=True)


async def _text_in_db(task_id: int) -> str:
    return await database_sync_to_async(lambda: Document.objects.get(task_id=task_id).text)()


async def test_a_nul_typed_into_one_document_never_stops_any_document_saving(
    connect, alice, bob, workspace, task
):
    # given an editor on one document and someone else on another document of the process
    other_task = await database_sync_to_async(factories.make_task)(workspace)
    poisoner = await connect(bob, task)
    neighbour = await connect(alice, other_task)

    # when the first types a NUL (a legal Yjs update) while the second types too
    await poisoner.insert(0, "nul\x00here")
    await neighbour.insert(0, "unaffected")

    # then both are acknowledged (durable) and the text column holds a replacement character
    await poisoner.wait_for(lambda: poisoner.acknowledged)
    await neighbour.wait_for(lambda: neighbour.acknowledged)
    assert await _text_in_db(task.pk) == "nul\ufffdhere"
    assert await _text_in_db(other_task.pk) == "unaffected"

    # and the next edit of the poisoned document saves too
    await poisoner.insert(0, "still ")
    await poisoner.wait_for(lambda: poisoner.acknowledged)
    assert await _text_in_db(task.pk) == "still nul\ufffdhere"
    await poisoner.close()
    await neighbour.close()


async def test_a_client_holding_the_nul_state_cannot_stop_the_document_saving_on_reconnect(
    application, connect, rooms, bob, task, settings
):
    settings.DOCUMENT_ROOM_IDLE_SECONDS = 0.01
    first = await connect(bob, task)
    await first.insert(0, "a\x00b")
    await first.wait_for(lambda: first.acknowledged)
    state = first.doc.get_update()
    await first.close()
    await asyncio.sleep(0.1)
    assert task.document.pk not in rooms.rooms  # unloaded: the next socket loads it afresh

    # a client that kept the poisoned state (say, an open tab) comes back and types on
    again = await connect(bob, task)
    again.doc.apply_update(state)
    await again.pump(0.1)
    await again.insert(3, " and more")
    await again.wait_for(lambda: again.acknowledged)
    assert await _text_in_db(task.pk) == "a\ufffdb and more"
    await again.close()


async def test_an_edit_that_would_pass_the_size_limit_is_refused_and_the_writer_is_told(
    connect, alice, bob, task, settings
):
    settings.DOCUMENT_MAX_BYTES = 4000
    writer = await connect(bob, task)
    reader = await connect(alice, task)
    await writer.insert(0, "a" * 1500)
    await writer.wait_for(lambda: writer.acknowledged)

    await writer.insert(0, "b" * 3000)  # together over 4,000 bytes of Yjs state

    await writer.wait_for(lambda: bool(writer.denied))
    assert writer.denied[0].startswith("document too large")
    await reader.pump(0.2)
    assert reader.value == "a" * 1500
    assert await _text_in_db(task.pk) == "a" * 1500
    await writer.close()
    await reader.close()


def test_a_server_side_edit_over_the_size_limit_is_refused(task, settings):
    settings.DOCUMENT_MAX_BYTES = 4000
    documents.apply_text_edit(task=task, new_text="x" * 3000, author_label="alice")

    with pytest.raises(ValidationError):
        documents.apply_text_edit(task=task, new_text="y" * 5000, author_label="alice")
    assert Document.objects.get(task=task).text == "x" * 3000


async def test_a_document_larger_than_one_message_reaches_a_new_client_in_parts(
    connect, alice, bob, task, settings
):
    # given a document whose state is larger than the largest message the server may send
    settings.WEBSOCKET_MAX_MESSAGE_BYTES = 3000
    for user, letter in ((alice, "a"), (bob, "b")):
        author = await connect(user, task)
        await author.insert(0, letter * 2000)
        await author.wait_for(lambda a=author: a.acknowledged)
        await author.close()

    # when someone opens it, then every frame is within the limit and the text is complete
    newcomer = await connect(alice, task)
    await newcomer.wait_for(lambda: len(newcomer.value) == 4000)
    assert sorted(newcomer.value) == sorted("a" * 2000 + "b" * 2000)
    assert max(len(frame) for frame in newcomer.received) <= 3000
    await newcomer.close()


# The CSS payload of issue 15: a viewer's colour that covered every co-editor's page.
CSS_COLOR = (
    "rgba(200,0,0,.85); position:fixed; top:0; left:0; width:100vw; height:100vh;"
    " z-index:99999; background:url(https://attacker.example/x.png)"
)


async def test_presence_fields_a_browser_renders_are_validated_by_the_server(
    connect, alice, carol, task
):
    # given a viewer who sends a colour that is CSS, a huge name, and fields nobody asked for
    viewer = await connect(carol, task)
    editor = await connect(alice, task)
    state = {
        "user": {"name": "carol" + "x" * 500, "color": CSS_COLOR, "kind": "agent", "extra": 1},
        "cursor": {"anchor": {"tname": "content", "assoc": 0, "evil": "<img>"}, "head": None},
        "collab": {"username": "alice", "can_edit": True, "agent": "Mira"},
        "style": "position:fixed",
    }
    await viewer.set_awareness(1, json.dumps(state))

    # then what the others receive holds only known, checked fields
    carol_id = viewer.doc.client_id
    await editor.wait_for(lambda: carol_id in editor.awareness)
    shown = json.loads(editor.awareness[carol_id])
    assert set(shown) == {"user", "collab"}
    assert re.fullmatch(r"#[0-9a-fA-F]{6}", shown["user"]["color"])
    assert re.fullmatch(r"#[0-9a-fA-F]{6}([0-9a-fA-F]{2})?", shown["user"]["colorLight"])
    assert len(shown["user"]["name"]) <= 64
    assert shown["user"]["kind"] == "person"
    assert set(shown["user"]) == {"name", "color", "colorLight", "kind", "role"}
    assert shown["collab"] == {"username": "carol", "can_edit": False}
    await viewer.close()
    await editor.close()


async def test_a_valid_cursor_passes_unchanged_and_the_colour_is_the_person_s_own(
    connect, alice, bob, task
):
    # (issue 28: the colour, like the name, says who this is, so the server sets it)
    writer = await connect(bob, task)
    reader = await connect(alice, task)
    cursor = {"client": 7, "clock": 3}
    state = {
        "user": {"name": "bob", "color": "#d1495b", "colorLight": "#d1495b33", "role": "editor"},
        "cursor": {"anchor": {"item": cursor, "assoc": 0}, "head": {"item": cursor, "assoc": -1}},
    }
    await writer.set_awareness(1, json.dumps(state))

    await reader.wait_for(lambda: writer.doc.client_id in reader.awareness)
    shown = json.loads(reader.awareness[writer.doc.client_id])
    assert shown["user"]["color"] == presence_color(f"user:{bob.pk}")
    # the same positions, with every field of a Yjs RelativePosition (None where unused)
    assert shown["cursor"] == {
        "anchor": {"type": None, "tname": None, "item": cursor, "assoc": 0},
        "head": {"type": None, "tname": None, "item": cursor, "assoc": -1},
    }
    await writer.close()
    await reader.close()


async def test_a_viewer_cannot_show_up_as_another_person_or_an_agent(connect, alice, carol, task):
    # given a viewer whose account name carries bidirectional controls (a right-to-left
    # override turns what follows around on screen) and control characters
    carol.first_name = "\u202eCarol\u200f"
    carol.last_name = "Viewer\u2066\x07\x9b"
    await database_sync_to_async(carol.save)()
    viewer = await connect(carol, task)
    editor = await connect(alice, task)

    # when her client says it is alice, or the agent Mira, in alice's colour
    state = {
        "user": {
            "name": "alice",
            "color": presence_color(f"user:{alice.pk}"),
            "kind": "agent",
            "role": "owner",
        }
    }
    await viewer.set_awareness(1, json.dumps(state))

    # then the others see her account's name, her colour, a person, a viewer
    carol_id = viewer.doc.client_id
    await editor.wait_for(lambda: carol_id in editor.awareness)
    shown = json.loads(editor.awareness[carol_id])["user"]
    assert shown == {
        "name": "Carol Viewer",
        "color": presence_color(f"user:{carol.pk}"),
        "colorLight": presence_color(f"user:{carol.pk}") + "33",
        "kind": "person",
        "role": "viewer",
    }
    await viewer.close()
    await editor.close()


async def test_an_oversized_awareness_message_closes_the_socket_and_is_not_fanned_out(
    connect, alice, carol, task
):
    viewer = await connect(carol, task)
    editor = await connect(alice, task)

    huge = json.dumps({"user": {"name": "carol"}, "padding": "x" * 900_000})
    await viewer.set_awareness(1, huge)

    await viewer.wait_for(lambda: viewer.closed_with is not None)
    assert viewer.closed_with == 4413
    await editor.pump(0.2)
    assert max(len(frame) for frame in editor.received) < 10_000
    await editor.close()


async def test_a_socket_cannot_fill_the_presence_list_with_made_up_clients(
    connect, alice, carol, task
):
    viewer = await connect(carol, task)
    editor = await connect(alice, task)
    entries = [
        yprotocol.AwarenessEntry(1000 + n, 1, json.dumps({"user": {"name": f"ghost {n}"}}))
        for n in range(50)
    ]
    await viewer.send(yprotocol.awareness(yprotocol.encode_awareness_update(entries)))

    await editor.pump(0.3)
    assert len([key for key in editor.awareness if key >= 1000]) <= 8
    await viewer.close()
    await editor.close()


async def test_a_cursor_at_the_end_of_the_text_keeps_every_field_browsers_read(
    connect, alice, bob, task
):
    # y-codemirror.next reads position.item without parsing: a missing one crashed the
    # remote-selection plugin of every other page (#19.2)
    writer = await connect(bob, task)
    reader = await connect(alice, task)
    end = {"type": None, "tname": "content", "item": None, "assoc": 0}
    state = {"user": {"name": "bob", "color": "#d1495b"}, "cursor": {"anchor": end, "head": end}}
    await writer.set_awareness(1, json.dumps(state))

    await reader.wait_for(lambda: writer.doc.client_id in reader.awareness)
    shown = json.loads(reader.awareness[writer.doc.client_id])
    assert shown["cursor"] == {"anchor": end, "head": end}
    await writer.close()
    await reader.close()


async def test_a_delete_of_half_an_emoji_closes_the_socket_before_anything_changes(
    connect, alice, bob, task
):
    # (issue 28; the official client's version of this runs in tests/reliability)
    writer = await connect(bob, task)
    reader = await connect(alice, task)
    await writer.insert(0, "a😀b")
    await writer.wait_for(lambda: writer.acknowledged)
    await reader.wait_for(lambda: reader.value == "a😀b")

    # when the writer deletes UTF-16 clock 2 of its own text, the second half of the emoji
    # (what Yjs sends for text.delete(2, 1): no structs, one delete range)
    client = yprotocol.var_uint(writer.doc.client_id)
    await writer.send(yprotocol.sync_update(b"\x00\x01" + client + b"\x01\x02\x01"))

    # then the socket is closed as for an update Yjs cannot decode, and nothing changed
    await writer.wait_for(lambda: writer.closed_with is not None)
    assert writer.closed_with == 4400
    await reader.pump(0.2)
    assert reader.value == "a😀b"
    assert await _text_in_db(task.pk) == "a😀b"
    await reader.close()


async def test_an_update_that_follows_structs_the_server_never_took_does_not_reach_the_text(
    connect, alice, bob, task
):
    writer = await connect(bob, task)
    await writer.insert(0, "start ")
    await writer.wait_for(lambda: writer.acknowledged)

    # given structs of the writer that the server never gets (a refused update, say)
    writer.text.insert(len("start "), "never sent")
    # when the writer's next update, which follows them, arrives
    await writer.insert(0, "hidden ")

    # and an editor alongside types and is acknowledged (her batch writes the text column)
    other = await connect(alice, task)
    await other.wait_for(lambda: other.value == "start ")
    await other.insert(len("start "), "seen")
    await other.wait_for(lambda: other.acknowledged)

    # then the stored text is what every replica that syncs from the server holds
    assert other.value == "start seen"
    assert await _text_in_db(task.pk) == "start seen"
    await other.close()
    await writer.close()
