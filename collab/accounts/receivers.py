"""Signal receivers of accounts (connected in AccountsConfig.ready)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.signals import user_logged_in
from django.http import HttpRequest

from collab.accounts.middleware import remember_time_zone
from collab.accounts.services import time_zone_of


def on_login(sender: Any, request: HttpRequest | None, user: Any, **kwargs: Any) -> None:
    """``user_logged_in``: the session carries the person's time zone from now on."""
    if request is not None and hasattr(request, "session"):
        remember_time_zone(request, time_zone_of(user))


def connect() -> None:
    user_logged_in.connect(on_login, dispatch_uid="collab.accounts.time_zone")
