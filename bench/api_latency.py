"""Latency of the JSON API, in process: p50 and p99 per endpoint.

    python bench/api_latency.py [--requests 200] [--messages 2000]

Runs against a fresh embedded-mode SQLite database in a temporary folder (or against
DATABASE_URL when set: use a throwaway database), through Django's full middleware stack and a
real API token. Requests go through Django's test client, so the figures are Django's own
handling time without a network hop or the ASGI server.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=200, help="requests per endpoint")
    parser.add_argument("--messages", type=int, default=2000, help="chat messages to seed")
    args = parser.parse_args()

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    with tempfile.TemporaryDirectory(prefix="collab-bench-") as data_dir:
        os.environ.setdefault("DATA_DIR", data_dir)
        run(args)


def run(args: argparse.Namespace) -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")
    os.environ.setdefault("LOG_LEVEL", "ERROR")
    import django

    django.setup()

    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client

    from collab.accounts.services import create_api_token
    from collab.tasks.models import Message
    from collab.tasks.services import create_task
    from collab.workspaces.services import create_workspace

    settings.ALLOWED_HOSTS = ["testserver"]
    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user(username=f"bench{time.time_ns()}")
    workspace = create_workspace(owner=user, name="Bench")
    membership = workspace.memberships.get()
    for n in range(20):
        create_task(membership=membership, title=f"Task {n}")
    task = create_task(membership=membership, title="Busy task")
    # Seeding only: bulk rows instead of the service, which would broadcast each message.
    Message.objects.bulk_create(
        Message(task=task, author=user, author_name=user.username, body=f"message {n} " * 10)
        for n in range(args.messages)
    )
    token = create_api_token(user=user, name="bench").token
    client = Client(headers={"Authorization": f"Bearer {token}"})

    endpoints = [
        ("GET /api/workspaces", lambda: client.get("/api/workspaces")),
        (
            "GET /api/workspaces/{id}/tasks",
            lambda: client.get(f"/api/workspaces/{workspace.pk}/tasks"),
        ),
        ("GET /api/tasks/{id}", lambda: client.get(f"/api/tasks/{task.pk}")),
        ("GET /api/tasks/{id}/messages", lambda: client.get(f"/api/tasks/{task.pk}/messages")),
        (
            "GET /api/tasks/{id}/messages?limit=200",
            lambda: client.get(f"/api/tasks/{task.pk}/messages", {"limit": 200}),
        ),
        (
            "POST /api/tasks/{id}/messages",
            lambda: client.post(
                f"/api/tasks/{task.pk}/messages", {"body": "hello"}, content_type="application/json"
            ),
        ),
    ]
    database = settings.DATABASES["default"]["ENGINE"].rsplit(".", 1)[-1]
    print(f"{args.requests} requests per endpoint, {args.messages} messages seeded, {database}")
    print(f"{'endpoint':42} {'p50 ms':>8} {'p99 ms':>8}")
    for name, call in endpoints:
        call()  # warm up
        timings = []
        for _ in range(args.requests):
            start = time.perf_counter()
            response = call()
            timings.append((time.perf_counter() - start) * 1000)
            if response.status_code >= 300:
                raise SystemExit(f"{name} answered {response.status_code}: {response.content!r}")
        cuts = statistics.quantiles(timings, n=100)
        print(f"{name:42} {cuts[49]:8.2f} {cuts[98]:8.2f}")


if __name__ == "__main__":
    main()
