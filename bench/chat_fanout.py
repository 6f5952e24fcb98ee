"""Chat fan-out: from `post_message` to the frame on every open chat socket; p50 and p99.

    python bench/chat_fanout.py [--sockets 50] [--messages 100] [--format json|html]

In process: the ASGI app (auth middleware, consumer, channel layer) driven by Channels'
WebsocketCommunicator, without Daphne or a network hop. Each message is posted through the
service, as the chat form does; the figure per message is the time until its frame is on the
last of the sockets (and, separately, on an average socket). Embedded mode uses a fresh SQLite
database in a temporary folder and the in-process channel layer; with DATABASE_URL (use a
throwaway database) and REDIS_URL set it measures the Redis layer instead.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from channels.testing import WebsocketCommunicator


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sockets", type=int, default=50, help="open chat sockets")
    parser.add_argument("--messages", type=int, default=100, help="messages posted, one by one")
    parser.add_argument("--format", choices=["json", "html"], default="json")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    with tempfile.TemporaryDirectory(prefix="collab-bench-") as data_dir:
        os.environ.setdefault("DATA_DIR", data_dir)
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")
        os.environ.setdefault("LOG_LEVEL", "ERROR")
        import django

        django.setup()
        asyncio.run(run(args))


def _setup(sockets: int) -> tuple[int, list[str], object]:
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from collab.accounts.services import create_api_token
    from collab.tasks.services import create_task
    from collab.workspaces.models import Membership, Role
    from collab.workspaces.services import create_workspace

    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)
    stamp = time.time_ns()
    users = [
        get_user_model().objects.create_user(username=f"bench{stamp}-{n}") for n in range(sockets)
    ]
    workspace = create_workspace(owner=users[0], name="Bench")
    for user in users[1:]:
        Membership.objects.create(workspace=workspace, user=user, role=Role.EDITOR)
    owner = Membership.objects.select_related("workspace", "user").get(
        workspace=workspace, user=users[0]
    )
    task = create_task(membership=owner, title="Fan-out")
    tokens = [create_api_token(user=user, name="bench").token for user in users]
    return task.pk, tokens, owner


def _post(owner: object, task_id: int, n: int) -> None:
    from collab.tasks.models import Task
    from collab.tasks.services import post_message

    post_message(membership=owner, task=Task.objects.get(pk=task_id), body=f"message {n}")  # type: ignore[arg-type]


async def _arrival(socket: WebsocketCommunicator, started: float) -> float:
    await socket.receive_from(timeout=30)
    return time.perf_counter() - started


async def run(args: argparse.Namespace) -> None:
    from channels.db import database_sync_to_async
    from django.conf import settings

    from collab.asgi import application

    task_id, tokens, owner = await database_sync_to_async(_setup)(args.sockets)
    query = "?format=json" if args.format == "json" else ""
    sockets = []
    for token in tokens:
        socket = WebsocketCommunicator(
            application,
            f"/ws/tasks/{task_id}/chat{query}",
            headers=[(b"authorization", f"Bearer {token}".encode())],
        )
        connected, _ = await socket.connect(timeout=30)
        assert connected, "a bench socket was refused"
        sockets.append(socket)

    last: list[float] = []
    each: list[float] = []
    posted: list[float] = []
    for n in range(args.messages):
        started = time.perf_counter()
        await database_sync_to_async(_post)(owner, task_id, n)
        posted.append(time.perf_counter() - started)

        arrivals = await asyncio.gather(*(_arrival(socket, started) for socket in sockets))
        last.append(max(arrivals))
        each.extend(arrivals)

    for socket in sockets:
        await socket.disconnect()

    def ms(values: list[float], q: float) -> str:
        ordered = sorted(values)
        return f"{ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000:.1f} ms"

    layer = settings.CHANNEL_LAYERS["default"]["BACKEND"].rsplit(".", 1)[-1]
    print(
        f"chat fan-out: {args.sockets} sockets ({args.format}), {args.messages} messages, "
        f"{layer}, {settings.DATABASES['default']['ENGINE'].rsplit('.', 1)[-1]}"
    )
    print(f"  post -> last socket   p50 {ms(last, 0.5)}   p99 {ms(last, 0.99)}")
    print(f"  post -> each socket   p50 {ms(each, 0.5)}   p99 {ms(each, 0.99)}")
    print(f"  post_message itself   p50 {ms(posted, 0.5)}   p99 {ms(posted, 0.99)}")
    print(f"  slowest posts         {', '.join(f'{v * 1000:.0f}' for v in sorted(posted)[-3:])} ms")
    print(f"  mean per message      {statistics.fmean(last) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
