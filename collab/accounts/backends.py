"""The authentication backend: django-axes' lockout check in front of Django's own."""

from __future__ import annotations

from typing import Any

from axes.backends import AxesStandaloneBackend
from django.contrib.auth.base_user import AbstractBaseUser
from django.http import HttpRequest


class ThrottledBackend(AxesStandaloneBackend):
    """Refuses a locked-out address or username (django-axes), then lets ModelBackend check
    the password. A call without a request (a management command, the test client's
    ``login``) has no address to count against and is left to ModelBackend."""

    def authenticate(
        self,
        request: HttpRequest | None,
        username: str | None = None,
        password: str | None = None,
        **kwargs: Any,
    ) -> AbstractBaseUser | None:
        if request is None:
            return None
        user = super().authenticate(request, username=username, password=password, **kwargs)
        return user
