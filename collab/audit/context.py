"""Where the current action comes from (IP, user agent, channel), set once per request.

Services call ``record_event`` without a request; the middleware (web), the API auth, the
management commands and Celery jobs set this context instead, so "from where" is always known.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponse

from collab.lib.addresses import client_address


@dataclass(frozen=True)
class Origin:
    via: str = "cli"
    ip: str | None = None
    user_agent: str = ""


_ORIGIN_UNKNOWN = Origin()
_current: contextvars.ContextVar[Origin] = contextvars.ContextVar(
    "audit_origin",
    default=_ORIGIN_UNKNOWN,
)


def current_origin() -> Origin:
    return _current.get()


@contextmanager
def origin(value: Origin) -> Iterator[None]:
    token = _current.set(value)
    try:
        yield
    finally:
        _current.reset(token)


def origin_from_request(request: HttpRequest) -> Origin:
    via = "api" if request.path.startswith("/api/") else "web"
    return Origin(
        via=via,
        ip=client_address(request.META),  # X-Forwarded-For only from TRUSTED_PROXIES
        user_agent=request.META.get("HTTP_USER_AGENT", "")[:300],
    )


class AuditOriginMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with origin(origin_from_request(request)):
            return self.get_response(request)
