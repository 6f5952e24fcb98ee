"""Throttling of guesses: logins, API tokens and sign-ups (django-axes).

django-axes records failed attempts in the database (so every web process sees them) and
refuses an address or a username once it reaches ``AXES_FAILURE_LIMIT`` failures, for
``AXES_COOLOFF_TIME``; a successful login resets the count. Logins lock per address and per
username; API tokens and sign-ups with a taken username count per address only (a token names
no account, and locking a username because someone else tried to register it would let anyone
lock anyone out).
"""

from __future__ import annotations

from typing import Any

from axes.handlers.database import AxesDatabaseHandler
from axes.handlers.proxy import AxesProxyHandler
from axes.helpers import get_failure_limit
from django.conf import settings
from django.contrib.auth.models import User
from django.contrib.auth.signals import user_login_failed
from django.db.models import Expression, IntegerField, Subquery, Sum, Value
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

from collab.accounts.services import check_api_token
from collab.lib.addresses import client_address

# What a request other than a login passes as its "credentials" to axes.
_PER_ADDRESS = "collab_per_address"
# django-axes' ``username`` columns (AccessAttempt, AccessFailureLog, AccessLog).
USERNAME_COLUMN_CHARS = 255


class TooManyAttempts(Exception):
    """This address (or account) failed too often; it may try again later."""

    def __init__(self) -> None:
        minutes = int(settings.AXES_COOLOFF_TIME.total_seconds() // 60)
        super().__init__(f"Too many failed attempts from here. Try again in {minutes} minutes.")


def client_ip(request: HttpRequest) -> str | None:
    """The address that counts: the socket's peer, or behind one of ``TRUSTED_PROXIES`` the
    client address that proxy reports in ``X-Forwarded-For`` (every request would otherwise
    come from the proxy, and one guesser would lock everybody out); never a header a client
    could forge (collab/lib/addresses.py)."""
    return client_address(request.META)


def client_username(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """The username axes counts and stores (``AXES_USERNAME_CALLABLE``): the one the
    credentials (or else the posted form) name, cut to the column's length. The forms refuse a
    longer name before ``authenticate``; this is the bound for every other way in, so no
    request can make the throttle's own write fail."""
    field = getattr(settings, "AXES_USERNAME_FORM_FIELD", "username")
    if credentials:
        value = credentials.get(field)
    else:
        value = getattr(request, "data", request.POST).get(field)
    if value is None:
        return None
    return str(value)[:USERNAME_COLUMN_CHARS]


def lockout_parameters(request: HttpRequest | None, credentials: dict[str, Any] | None) -> list:
    if credentials and credentials.get(_PER_ADDRESS):
        return ["ip_address"]
    return ["ip_address", "username"]


def lockout_response(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    text = str(TooManyAttempts())
    if request.path.startswith("/api/"):
        return HttpResponse(f'{{"detail": "{text}"}}', status=429, content_type="application/json")
    html = render_to_string("accounts/locked.html", {"message": text}, request=request)
    return HttpResponse(html, status=429)


def _credentials(kind: str) -> dict[str, Any]:
    return {"username": None, _PER_ADDRESS: kind}


def check_allowed(request: HttpRequest, kind: str) -> None:
    """Raise ``TooManyAttempts`` when this address is locked out for ``kind`` of guess."""
    if AxesProxyHandler.is_locked(request, _credentials(kind)):
        raise TooManyAttempts


def failures_of(request: HttpRequest, kind: str) -> Expression | None:
    """The failures django-axes counts against this address for ``kind``, as an SQL expression
    that another query can carry (the API token lookup), so a valid token costs no lockout
    query of its own; compare with ``is_over_limit``. ``None`` where that cannot be expressed
    (a handler other than the database one): then call ``check_allowed``."""
    handler = AxesProxyHandler.get_implementation()
    if not isinstance(handler, AxesDatabaseHandler):
        return None
    AxesProxyHandler.update_request(request)
    querysets = handler.get_user_attempts(request, _credentials(kind))
    if len(querysets) != 1:
        return None
    total = (
        querysets[0]
        .order_by()
        .annotate(one=Value(1))
        .values("one")
        .annotate(total=Sum("failures_since_start"))
        .values("total")
    )
    return Coalesce(Subquery(total, output_field=IntegerField()), 0)


def is_over_limit(request: HttpRequest, kind: str, failures: int) -> bool:
    return failures >= get_failure_limit(request, _credentials(kind))


def record_failure(request: HttpRequest, kind: str) -> None:
    """One more failed guess of ``kind`` ("api_token", "signup") from this address."""
    user_login_failed.send(sender=__name__, credentials=_credentials(kind), request=request)


def authenticate_token(request: HttpRequest, token: str) -> User | None:
    """The owner of API ``token``, ``None`` for a bad one (counted as a failure from this
    address), or ``TooManyAttempts`` when the address is locked out, even for a valid token (a
    locked guesser learns nothing). The HTTP API (429) and the WebSocket handshake (4429) both
    call this. The address's failure count rides on the token lookup, so a valid token costs no
    lockout query of its own; a bad one pays the lockout check and the failure record."""
    failures = failures_of(request, "api_token")
    if failures is None:
        check_allowed(request, "api_token")
    checked = check_api_token(token.strip(), failures=failures)
    if checked.user is not None:
        if failures is not None and is_over_limit(request, "api_token", checked.failures):
            raise TooManyAttempts
        return checked.user
    if failures is not None:
        check_allowed(request, "api_token")
    record_failure(request, "api_token")
    return None
