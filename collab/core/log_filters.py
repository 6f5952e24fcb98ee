"""Logging filters named by ``LOGGING`` in collab/settings.py."""

from __future__ import annotations

import logging


class OneLineRefusals(logging.Filter):
    """A refused request (403) in one line: who, what, where, and why.

    Django logs every ``PermissionDenied`` on ``django.request`` at WARNING with the exception
    attached, so each refusal (a viewer's post, an outsider's link) printed a ~40-line
    traceback. A refusal is the app doing its job, not an error: keep the reason, drop the
    traceback. Tracebacks stay for everything else (a 500 keeps its own).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "status_code", None) != 403:
            return True
        request = getattr(record, "request", None)
        exc = record.exc_info[1] if record.exc_info else None
        user = getattr(request, "user", None)
        who = user.get_username() if user is not None and user.is_authenticated else "anonymous"
        method = getattr(request, "method", "") or ""
        path = getattr(request, "path", "") or ""
        reason = str(exc) if exc is not None and str(exc) else record.getMessage()
        record.msg = "Refused (403) %s %s for %s: %s"
        record.args = (method, path, who, reason)
        record.exc_info = None
        record.exc_text = None
        return True
