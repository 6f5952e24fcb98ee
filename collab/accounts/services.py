"""Accounts: sign-up and personal API tokens."""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from collab.accounts.models import ApiToken
from collab.audit.models import AuditEvent
from collab.audit.services import record_event
from collab.workspaces.services import hash_token

TOKEN_PREFIX = "collab_"  # noqa: S105 - a public prefix, not a secret
# Writing last_used_at on every request would turn each API read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class NewApiToken:
    api_token: ApiToken
    token: str  # shown once


@transaction.atomic
def create_api_token(*, user: User, name: str) -> NewApiToken:
    name = name.strip()
    if not name:
        raise ValidationError({"name": "Name the token after where you will use it."})
    if len(name) > 100:
        raise ValidationError({"name": "Keep the name under 100 characters."})
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    api_token = ApiToken.objects.create(
        user=user, name=name, prefix=token[: len(TOKEN_PREFIX) + 6], token_hash=hash_token(token)
    )
    record_event(
        actor=user,
        action=AuditEvent.Action.API_TOKEN_CREATED,
        target=f"{name} ({api_token.prefix}…)",
    )
    return NewApiToken(api_token=api_token, token=token)


@transaction.atomic
def revoke_api_token(*, user: User, token_id: int) -> None:
    updated = ApiToken.objects.filter(pk=token_id, user=user, revoked_at=None).update(
        revoked_at=timezone.now()
    )
    if not updated and not ApiToken.objects.filter(pk=token_id, user=user).exists():
        raise ApiToken.DoesNotExist
    if updated:
        record_event(
            actor=user, action=AuditEvent.Action.API_TOKEN_REVOKED, target=f"token {token_id}"
        )


def authenticate_api_token(token: str) -> User | None:
    """The active user owning ``token``, or ``None``; records when the token was last used."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return None
    api_token = (
        ApiToken.objects.select_related("user")
        .filter(token_hash=hash_token(token), revoked_at=None)
        .first()
    )
    if api_token is None or not api_token.user.is_active:
        return None
    now = timezone.now()
    if api_token.last_used_at is None or now - api_token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=api_token.pk).update(last_used_at=now)
    return api_token.user
