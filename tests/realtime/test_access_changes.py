"""Open sockets follow their person's access (collab/realtime/access.py): removal, a role
change, a revoked token, deactivation and logout close or downgrade every socket of that person,
including sockets that never send anything."""

from __future__ import annotations

import pytest
from channels.db import database_sync_to_async
from django.conf import settings as django_settings
from django.contrib.auth.models import User
from django.test import Client

from collab.accounts.services import create_api_token, revoke_api_token
from collab.asgi import application as asgi_application
from collab.workspaces.models import Membership, Role
from collab.workspaces.services import change_role, remove_member
from tests.realtime.conftest import ORIGIN, WAIT, Socket
from tests.realtime.yclient import YClient, token_headers

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def _slow_refresh(settings):
    # Only the pushed change can close the socket in time: the periodic re-check waits a minute.
    settings.DOCUMENT_ROLE_REFRESH_SECONDS = 60


def _membership(workspace, user: User) -> Membership:
    return Membership.objects.select_related("workspace", "user").get(
        workspace=workspace, user=user
    )


async def _document_socket(application, user: User, task):
    new = await database_sync_to_async(create_api_token)(user=user, name="doc")
    client = YClient(application, task.pk, token_headers(new.token))
    assert await client.connect()
    await client.wait_for(lambda: bool(client.received))
    return client, new.api_token


async def _closed(client: YClient) -> int | None:
    await client.wait_for(lambda: client.closed_with is not None, timeout=WAIT)
    return client.closed_with


async def test_a_removed_member_s_silent_document_socket_is_closed(
    application, rooms, alice, bob, workspace, task
):
    client, _ = await _document_socket(application, bob, task)

    def remove() -> None:
        remove_member(actor=_membership(workspace, alice), membership=_membership(workspace, bob))

    await database_sync_to_async(remove)()

    assert await _closed(client) == 4403


async def test_an_editor_demoted_to_viewer_cannot_write_on_the_open_socket(
    application, rooms, alice, bob, workspace, task
):
    client, _ = await _document_socket(application, bob, task)

    def demote() -> None:
        change_role(
            actor=_membership(workspace, alice),
            membership=_membership(workspace, bob),
            role=Role.VIEWER,
        )

    await database_sync_to_async(demote)()
    await client.pump(0.3)

    await client.insert(0, "written after the demotion")
    await client.wait_for(lambda: bool(client.denied))
    assert "read-only" in client.denied[0]


async def test_revoking_a_token_closes_the_sockets_opened_with_it(
    application, rooms, open_socket, bob, task
):
    doc, token = await _document_socket(application, bob, task)
    other_doc, _ = await _document_socket(application, bob, task)  # another token of bob's

    await database_sync_to_async(revoke_api_token)(user=bob, token_id=token.pk)

    assert await _closed(doc) == 4403
    await other_doc.pump(0.3)
    assert other_doc.closed_with is None
    await other_doc.close()


async def test_deactivating_a_user_closes_their_chat_and_document_sockets(
    application, rooms, open_socket, bob, task
):
    doc, _ = await _document_socket(application, bob, task)
    chat = await open_socket(bob, task.pk, fmt="json")
    assert chat.accepted

    def deactivate() -> None:
        bob.is_active = False
        bob.save(update_fields=["is_active"])

    await database_sync_to_async(deactivate)()

    assert await _closed(doc) == 4403
    assert await chat.receive_close() == 4403


async def test_logging_out_closes_the_sockets_of_that_session_only(rooms, bob, task):
    def logged_in() -> tuple[Client, str]:
        client = Client()
        client.force_login(bob)
        name = django_settings.SESSION_COOKIE_NAME
        return client, f"{name}={client.cookies[name].value}"

    browser, cookie = await database_sync_to_async(logged_in)()
    _other_browser, other_cookie = await database_sync_to_async(logged_in)()
    sockets = []
    for value in (cookie, other_cookie):
        headers = [(b"origin", ORIGIN.encode()), (b"cookie", value.encode())]
        socket = Socket(asgi_application, f"/ws/tasks/{task.pk}/chat?format=json", headers)
        accepted, _ = await socket.connect(timeout=WAIT)
        assert accepted
        sockets.append(socket)

    await database_sync_to_async(lambda: browser.post("/accounts/logout/"))()

    assert await sockets[0].receive_close() == 4403
    assert await sockets[1].receive_nothing(timeout=0.5)
    await sockets[1].disconnect()


async def test_a_change_nobody_announced_still_applies_within_the_refresh_interval(
    application, rooms, bob, workspace, task, settings
):
    settings.DOCUMENT_ROLE_REFRESH_SECONDS = 0.2
    client, _ = await _document_socket(application, bob, task)

    # as an admin editing the database directly: no service, no event
    await database_sync_to_async(
        lambda: Membership.objects.filter(workspace=workspace, user=bob).delete()
    )()

    assert await _closed(client) == 4403


@pytest.mark.parametrize("fmt", ["json", "html"])
async def test_a_socket_opened_with_an_outdated_role_is_told_the_current_one_at_once(
    application, rooms, open_socket, bob, task, fmt
):
    # bob's page was rendered while he was a viewer; he was promoted while its socket was away
    chat = await open_socket(bob, task.pk, fmt=fmt, role="viewer")
    assert chat.accepted

    if fmt == "json":
        assert await chat.receive_event() == {
            "type": "access.changed",
            "role": "editor",
            "can_edit": True,
        }
    else:
        html = await chat.receive_html()
        assert 'id="task-role"' in html
        assert 'data-role="editor"' in html
        assert 'data-can-edit="true"' in html
        assert 'hx-swap-oob="true"' in html


@pytest.mark.parametrize("role", ["editor", None, "superuser", ""])
async def test_a_socket_opened_with_its_current_role_or_none_gets_no_access_frame(
    application, rooms, open_socket, bob, task, role
):
    # the current role, no role, or one that is not a role (ignored): nothing is sent at
    # connect, so the first frame a client reads is still the answer to its own
    chat = await open_socket(bob, task.pk, fmt="json", role=role)
    assert chat.accepted
    assert await chat.receive_nothing(timeout=0.3)
    await chat.send_json_to({"type": "ping"})
    assert await chat.receive_event() == {"type": "pong"}
