"""Who is calling the API: a personal token (``Authorization: Bearer``) or the browser session.

A request that carries an ``Authorization`` header is judged by its token alone: a bad token
answers 401 even when a session cookie rides along. Without the header the Django session is
accepted, with Django's CSRF check on writes (the docs page sends the token for you).
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.http import HttpRequest
from ninja.errors import HttpError
from ninja.security import HttpBearer, SessionAuth

from collab.accounts import throttle


class BearerToken(HttpBearer):
    """``Authorization: Bearer <token>`` with a token from the settings page."""

    def authenticate(self, request: HttpRequest, token: str) -> User | None:
        # Guessing is throttled per address (collab/accounts/throttle.py): after too many bad
        # tokens, 429 for a while, even for a valid token.
        try:
            return throttle.authenticate_token(request, token)
        except throttle.TooManyAttempts as exc:
            raise HttpError(429, str(exc)) from None


class BrowserSession(SessionAuth):
    """The logged-in browser session, CSRF-checked on unsafe methods."""

    def __call__(self, request: HttpRequest) -> Any:
        if "authorization" in request.headers:
            return None  # the token decides alone
        if not request.user.is_authenticated:
            # No session: 401 with WWW-Authenticate, not the 403 a CSRF check would answer
            # first (there is nothing a forged request could act as).
            return None
        return super().__call__(request)


def by_token(request: HttpRequest) -> bool:
    """Whether this API request was authenticated by a token (not the browser session)."""
    return "authorization" in request.headers


def current_user(request: HttpRequest) -> User:
    """The user that authenticated this API request."""
    user = getattr(request, "auth", None)
    if not isinstance(user, User):  # pragma: no cover - auth runs before every operation
        raise TypeError("API operation reached without an authenticated user.")
    return user
