"""Reads of a person's own account: their API tokens. Nobody reads another person's tokens,
so every read takes the user and a token of someone else's is not found (404)."""

from __future__ import annotations

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import Http404

from collab.accounts.models import ApiToken


def list_api_tokens(user: User) -> QuerySet[ApiToken]:
    """``user``'s tokens, revoked ones too (the settings page shows when), newest first."""
    return ApiToken.objects.filter(user=user).order_by("-created_at", "-id")


def get_api_token(user: User, token_id: int) -> ApiToken:
    """``user``'s token ``token_id``, or ``Http404`` (someone else's token is not found)."""
    found = ApiToken.objects.filter(user=user, pk=token_id).first()
    if found is None:
        raise Http404("No such token.")
    return found
