"""``manage.py serve``: the web server (Daphne), plus the worker in embedded mode."""

from __future__ import annotations

from typing import Any

from daphne.cli import CommandLineInterface
from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser


class Command(BaseCommand):
    help = "Serve Collab with Daphne; without REDIS_URL also run the Celery worker in-process."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args: Any, host: str, port: int, **options: Any) -> None:
        if settings.EMBEDDED:
            from collab.core.embedded import start_embedded_worker

            start_embedded_worker()
            mode = "embedded mode: SQLite, in-process channel layer and Celery worker"
        else:
            mode = "production mode: run `python manage.py worker` beside this process"
        self.stdout.write(
            self.style.SUCCESS(f"Collab is running at http://{host}:{port}/  ({mode})")
        )
        self.stdout.write("Create an account there, or: python manage.py seed_demo --user NAME")
        CommandLineInterface().run(["--bind", host, "--port", str(port), "collab.asgi:application"])
