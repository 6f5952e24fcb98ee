"""The views' shared answers: a 400 with its reasons in plain text, and a service call whose
``ValidationError`` becomes that 400 (the reasons are shown as text, never as HTML)."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ValidationError
from django.http import HttpResponse


def bad_request(reason: ValidationError | str) -> HttpResponse:
    text = (
        " ".join(str(m) for m in reason.messages) if isinstance(reason, ValidationError) else reason
    )
    return HttpResponse(text, status=400, content_type="text/plain")


def run_service(action: Callable[[], object], done: Callable[[], HttpResponse]) -> HttpResponse:
    """Call ``action`` (a service), then answer ``done()``; a 400 with the reasons when the
    service refuses with a ``ValidationError``."""
    try:
        action()
    except ValidationError as exc:
        return bad_request(exc)
    return done()
