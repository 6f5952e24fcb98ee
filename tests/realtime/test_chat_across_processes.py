"""Production mode: a message posted in another process (a Celery worker, a management command)
reaches the sockets of this one through the Redis channel layer."""

from __future__ import annotations

import asyncio
import sys

import pytest
from django.conf import settings
from django.contrib.auth.models import User

from collab.tasks.models import Task
from tests.processes import live_env
from tests.realtime.conftest import OpenSocket

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.redis,
    pytest.mark.skipif(not settings.REDIS_URL, reason="needs REDIS_URL (production mode)"),
]

POST_TWICE = """
from collab.tasks.models import Task
from collab.tasks.services import post_message
from collab.workspaces.models import Membership

task = Task.objects.get(pk={task_id})
bob = Membership.objects.select_related("workspace", "user").get(
    workspace=task.workspace, user__username="bob"
)
# Twice: a second publish from a process without an event loop is where channels-redis
# used to fail with "Event loop is closed".
post_message(membership=bob, task=task, body="first from another process")
post_message(membership=bob, task=task, body="second from another process")
"""


async def test_messages_posted_in_another_process_reach_open_sockets(
    open_socket: OpenSocket, alice: User, bob: User, task: Task
) -> None:
    socket = await open_socket(alice, task.pk, fmt="json")
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "manage.py",
        "shell",
        "-c",
        POST_TWICE.format(task_id=task.pk),
        cwd=settings.BASE_DIR,
        env=live_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    output, _ = await process.communicate()

    assert process.returncode == 0, output.decode()
    assert "broadcast to" not in output.decode()  # broadcast.group_send logs its failures
    first = await socket.receive_event()
    second = await socket.receive_event()
    assert [first["body"], second["body"]] == [
        "first from another process",
        "second from another process",
    ]
