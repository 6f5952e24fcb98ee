"""Accounts: sign-up and personal API tokens."""

from __future__ import annotations

import secrets
import zoneinfo
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Expression
from django.utils import timezone

from collab.accounts.models import ApiToken, Preferences
from collab.audit.models import AuditEvent
from collab.audit.services import record_event
from collab.realtime import broadcast
from collab.workspaces.services import hash_token

TOKEN_PREFIX = "collab_"  # noqa: S105 - a public prefix, not a secret
# Writing last_used_at on every request would turn each API read into a write.
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class NewApiToken:
    api_token: ApiToken
    token: str  # shown once


@transaction.atomic
def update_profile(
    *, user: User, display_name: str, email: str, time_zone: str | None = None
) -> User:
    """Change what others see of ``user`` (display name), where reset mails go and, unless
    ``None``, the time zone times are shown in (blank: the browser's)."""
    user.first_name = display_name.strip()[:150]
    user.email = email.strip()
    user.save(update_fields=["first_name", "email"])
    if time_zone is not None:
        if time_zone and time_zone not in zoneinfo.available_timezones():
            raise ValidationError({"time_zone": f"{time_zone!r} is not a time zone."})
        Preferences.objects.update_or_create(user=user, defaults={"time_zone": time_zone})
    return user


def time_zone_of(user: User) -> str:
    """The time zone ``user`` chose ("" for none)."""
    return Preferences.objects.filter(user=user).values_list("time_zone", flat=True).first() or ""


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
        user_id = user.pk  # sockets opened with the token close at once
        transaction.on_commit(lambda: broadcast.access_changed(user_id))


@dataclass(frozen=True)
class TokenCheck:
    user: User | None  # the active owner of a valid token, else None
    failures: int = 0  # what ``failures`` counted (a valid token's lookup only)


def check_api_token(token: str, *, failures: Expression | None = None) -> TokenCheck:
    """Look ``token`` up; ``failures`` (an SQL expression, ``throttle.failures_of``) is read in
    the same query, so that a caller can refuse a valid token from a locked-out address without
    a query of its own."""
    if not token.startswith(TOKEN_PREFIX) or len(token) > 200:
        return TokenCheck(None)
    found = ApiToken.objects.select_related("user").filter(
        token_hash=hash_token(token), revoked_at=None
    )
    if failures is not None:
        found = found.annotate(counted_failures=failures)
    api_token = found.first()
    if api_token is None or not api_token.user.is_active:
        return TokenCheck(None)
    now = timezone.now()
    if api_token.last_used_at is None or now - api_token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=api_token.pk).update(last_used_at=now)
    return TokenCheck(api_token.user, int(getattr(api_token, "counted_failures", 0) or 0))


def authenticate_api_token(token: str) -> User | None:
    """The active user owning ``token``, or ``None``; records when the token was last used."""
    return check_api_token(token).user
