"""/api/tokens: a person's own API tokens, as the settings page lists, makes and revokes them
(``collab.accounts``: its selectors and services). Nobody sees or revokes anyone else's token:
another person's token is not found (404), whatever the caller's role anywhere.

A token is made only from a signed-in browser session (the settings page, or this API from
it): a request authenticated by a token gets 403, so a leaked token cannot mint a successor
that outlives its own revocation. A token may list and revoke tokens (a script revokes its own
when it is done)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from ninja import Field, Query, Router, Schema, Status

from collab.accounts.models import ApiToken
from collab.accounts.selectors import get_api_token, list_api_tokens
from collab.accounts.services import create_api_token, revoke_api_token
from collab.api.auth import by_token, current_user
from collab.api.pagination import PageFields, PageQuery, cursor_page
from collab.api.schemas import BadRequest, Error, PathId, StoredText, body_config

router = Router(tags=["tokens"])  # mounted under /api/tokens

TOKEN_NAME_MAX_CHARS = ApiToken._meta.get_field("name").max_length or 100


class TokenOut(Schema):
    id: int
    name: str
    prefix: str = Field(description="The token's first characters, to tell tokens apart.")
    created_at: datetime
    last_used_at: datetime | None = Field(description="Written at most once a minute.")
    revoked_at: datetime | None
    active: bool


class NewTokenOut(TokenOut):
    token: str = Field(description="The token itself: shown this once, only its hash is kept.")


class TokenPage(PageFields):
    tokens: list[TokenOut] = Field(description="Oldest first; revoked ones too.")


class TokenIn(Schema):
    model_config = body_config({"name": "nightly export"})

    name: StoredText = Field(
        max_length=TOKEN_NAME_MAX_CHARS,
        description=f"Where you will use it; up to {TOKEN_NAME_MAX_CHARS} characters, not blank.",
    )


def _token(token: ApiToken) -> dict[str, Any]:
    return {
        "id": token.pk,
        "name": token.name,
        "prefix": token.prefix,
        "created_at": token.created_at,
        "last_used_at": token.last_used_at,
        "revoked_at": token.revoked_at,
        "active": token.is_active,
    }


@router.get("", response={200: TokenPage, 400: BadRequest, 401: Error}, summary="List your tokens")
def list_tokens(request: HttpRequest, page: Query[PageQuery]) -> dict[str, Any]:
    found = cursor_page(list_api_tokens(current_user(request)), page)
    return {"tokens": [_token(token) for token in found.rows], **found.fields()}


@router.post(
    "",
    response={201: NewTokenOut, 400: BadRequest, 401: Error, 403: Error},
    summary="Make a token (from a browser session; a token cannot make tokens: 403)",
)
def create_token(request: HttpRequest, payload: TokenIn) -> Status[dict[str, Any]]:
    """The answer's `token` is shown once; Collab keeps only its SHA-256 hash. Audited."""
    if by_token(request):
        raise PermissionDenied(
            "A token cannot make tokens: make one on the settings page (Settings → API tokens)."
        )
    new = create_api_token(user=current_user(request), name=payload.name)
    return Status(201, {**_token(new.api_token), "token": new.token})


@router.post(
    "/{token_id}/revoke",
    response={200: TokenOut, 400: BadRequest, 401: Error, 404: Error},
    summary="Revoke one of your tokens; it stops working at once (revoking again is harmless)",
)
def revoke_token(request: HttpRequest, token_id: PathId) -> dict[str, Any]:
    """Another person's token answers 404. Sockets opened with it close. Audited."""
    user = current_user(request)
    try:
        revoke_api_token(user=user, token_id=token_id)
    except ApiToken.DoesNotExist:
        raise Http404("No such token.") from None
    return _token(get_api_token(user, token_id))
