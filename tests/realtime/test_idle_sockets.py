"""Sockets that sit idle for longer than a Redis client's default read timeout stay usable."""

from __future__ import annotations

import asyncio

import pytest
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from collab.tasks.models import Task
from tests.realtime.conftest import OpenSocket

pytestmark = pytest.mark.django_db(transaction=True)

# redis-py 8 reads with a 5 s socket timeout unless told otherwise.
LONGER_THAN_REDIS_READ_TIMEOUT = 6.5


def _post(user: User, task: Task, body: str) -> None:
    client = Client()
    client.force_login(user)
    client.post(reverse("tasks:post_message", args=[task.pk]), {"body": body})


async def test_a_chat_socket_idle_for_a_while_still_receives_messages(
    open_socket: OpenSocket, alice: User, bob: User, task: Task
) -> None:
    if not settings.REDIS_URL:
        pytest.skip("the in-memory layer has no read timeout; CI runs this with Redis")
    socket = await open_socket(alice, task.pk, fmt="json")

    await asyncio.sleep(LONGER_THAN_REDIS_READ_TIMEOUT)
    await database_sync_to_async(_post)(bob, task, "Still there?")

    event = await socket.receive_event()
    assert (event["type"], event["body"]) == ("chat.message", "Still there?")
