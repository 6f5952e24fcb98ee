"""Refusals the services share across apps.

``Conflict`` is a ``ValidationError`` (pages show it as the 400 they always did) that says the
request was fine but the state it was based on has moved on: a suggestion or a question that
someone already decided, a document version that can no longer be merged. The API answers it
with 409 (collab/api/errors.py).
"""

from __future__ import annotations

from django.core.exceptions import ValidationError


class Conflict(ValidationError):
    """The request is valid but the state it was based on has changed since (API: 409)."""
