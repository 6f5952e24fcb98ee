"""``manage.py create_api_token USERNAME [--name NAME]``: print a new API token for scripts."""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError, CommandParser

from collab.accounts.services import create_api_token


class Command(BaseCommand):
    help = (
        "Create a personal API token for USERNAME and print it (only the token, on one line). "
        "The token is shown this once; Collab keeps only its hash."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("username")
        parser.add_argument(
            "--name",
            default="command line",
            help="Where the token will be used (default: %(default)s).",
        )

    def handle(self, *args: Any, username: str, name: str, **options: Any) -> None:
        user = get_user_model().objects.filter(username=username).first()
        if user is None:
            raise CommandError(f"No user named {username!r}.")
        if not user.is_active:
            raise CommandError(
                f"The user {username!r} is deactivated; their tokens would not work."
            )
        try:
            new = create_api_token(user=user, name=name)
        except ValidationError as exc:
            raise CommandError(" ".join(exc.messages)) from exc
        self.stdout.write(new.token)
