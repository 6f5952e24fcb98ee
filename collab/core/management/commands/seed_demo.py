"""``manage.py seed_demo --user NAME``: a demo workspace and task for a first look."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import reverse

from collab.core.services import seed_demo


class Command(BaseCommand):
    help = (
        "Create a demo workspace and task for a user, creating the user (with a password printed "
        "once) if needed. Running it again changes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--user", required=True, metavar="NAME", help="username to seed")

    def handle(self, *args: Any, user: str, **options: Any) -> None:
        try:
            seed = seed_demo(username=user)
        except ValidationError as exc:
            raise CommandError("; ".join(exc.messages)) from exc

        site = settings.SITE_URL.rstrip("/")
        if seed.password is not None:
            self.stdout.write(
                f"Created user {seed.user.get_username()} with password: {seed.password}\n"
                "  (shown once; change it on the settings page after logging in)"
            )
        if seed.created:
            self.stdout.write(self.style.SUCCESS(f"Created: {', '.join(seed.created)}."))
        else:
            self.stdout.write("Nothing to do: the demo workspace and task already exist.")
        self.stdout.write(
            f"Workspace: {site}{reverse('tasks:list', args=[seed.workspace.pk])}\n"
            f"Task:      {site}{reverse('tasks:detail', args=[seed.task.pk])}"
        )
