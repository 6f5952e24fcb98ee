"""/api/memory: the caller's own memory (what agents remember about you), through the services
of the Memory page. Never anyone else's: another person's item is a 404, and team memory (the
workspace's, not yours) stays on the Memory page."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from django.contrib.auth.models import User
from django.http import Http404, HttpRequest
from ninja import Field, Query, Router, Schema, Status

from agents.memory import selectors, services
from agents.memory.models import (
    KEY_MAX_CHARS,
    TEXT_MAX_CHARS,
    VALUE_MAX_CHARS,
    Kind,
    MemoryItem,
    ReviewMode,
    Scope,
)
from agents.memory.models import Status as ItemStatus
from agents.memory.services import IMPORT_MAX_ITEMS
from collab.api.auth import current_user
from collab.api.pagination import PageFields, PageQuery, cursor_page
from collab.api.schemas import MAX_ID, BadRequest, Error, PathId, StoredText, body_config
from collab.lib.errors import Conflict
from collab.workspaces.selectors import get_membership

router = Router(tags=["memory"])

READ = {400: BadRequest, 401: Error, 404: Error}
WRITE = {**READ, 403: Error, 409: Error}


class MemoryItemOut(Schema):
    id: int
    scope: str = Field(description="`personal` (everywhere) or `workspace` (one workspace).")
    workspace_id: int | None
    kind: Kind
    text: str
    key: str
    value: str
    pinned: bool
    shared: bool = Field(description="May be used in replies other people read.")
    confidence: float
    source_kind: str = Field(description="Where it came from: `manual`, `chat`, an agent, …")
    confirmed_at: datetime
    created_at: datetime


class MemoryPage(PageFields):
    items: list[MemoryItemOut] = Field(description="Oldest first.")


class MemorySearch(Schema):
    q: str = Field(min_length=1, max_length=200, description="Words to look for.")


class ItemIn(Schema):
    model_config = body_config({"text": "I prefer bullet points", "kind": "preference"})

    text: StoredText = Field(max_length=TEXT_MAX_CHARS)
    kind: Kind = Kind.PREFERENCE
    key: StoredText = Field("", max_length=KEY_MAX_CHARS, description="e.g. `lists`, `tone`.")
    value: StoredText = Field("", max_length=VALUE_MAX_CHARS)


class NewItemIn(ItemIn):
    workspace_id: int | None = Field(
        None, ge=1, le=MAX_ID, description="Only in this workspace; null: everywhere."
    )


class PinIn(Schema):
    model_config = body_config({"pinned": True})

    pinned: bool


class SettingsIn(Schema):
    model_config = body_config({"enabled": False})

    enabled: bool | None = Field(
        None,
        description="false switches memory off: nothing is "
        "remembered or used until you switch it back on.",
    )
    review_mode: ReviewMode | None = None
    admin_access_allowed: bool | None = None


class SettingsOut(Schema):
    enabled: bool
    review_mode: ReviewMode
    admin_access_allowed: bool


def _own_items(user: User) -> Any:
    return (
        selectors.visible_items(user)
        .filter(owner=user, status=ItemStatus.ACTIVE)
        .exclude(scope=Scope.TEAM)
    )


def own_item(user: User, item_id: int) -> MemoryItem:
    item = selectors.get_item_for_user(user, item_id)
    if item.scope == Scope.TEAM or item.owner_id != user.pk:
        raise Http404("No such memory.")
    return item


@router.get("/items", response={200: MemoryPage, **READ}, summary="List your memory")
def list_items(request: HttpRequest, page: Query[PageQuery]) -> dict[str, Any]:
    found = cursor_page(_own_items(current_user(request)), page)
    return {"items": found.rows, **found.fields()}


@router.get(
    "/search",
    response={200: list[MemoryItemOut], **READ},
    summary="Search your memory, best match first",
)
def search_items(request: HttpRequest, query: Query[MemorySearch]) -> list[MemoryItem]:
    user = current_user(request)
    sections = selectors.list_sections(user, query=query.q)
    return [
        item
        for section in sections
        if section.scope != Scope.TEAM
        for item in section.items
        if item.owner_id == user.pk
    ]


@router.post("/items", response={201: MemoryItemOut, **WRITE}, summary="Remember something")
def create_item(request: HttpRequest, payload: NewItemIn) -> Status[MemoryItem]:
    """What it does to what is already remembered (added, or replacing an older item) follows
    the Memory page's rules; the answer is the current item."""
    user = current_user(request)
    workspace = None
    if payload.workspace_id is not None:
        workspace = get_membership(user, payload.workspace_id).workspace
    result = services.create_item(
        user=user,
        text=payload.text,
        kind=payload.kind,
        key=payload.key,
        value=payload.value,
        scope=Scope.PERSONAL if workspace is None else Scope.WORKSPACE,
        workspace=workspace,
    )
    if result.item is None:
        raise Conflict("Memory is switched off: nothing was remembered.")
    return Status(201, result.item)


@router.put("/items/{item_id}", response={200: MemoryItemOut, **WRITE}, summary="Edit a memory")
def edit_item(request: HttpRequest, item_id: PathId, payload: ItemIn) -> MemoryItem:
    user = current_user(request)
    item = own_item(user, item_id)
    return services.edit_item(
        user=user,
        item=item,
        text=payload.text,
        kind=payload.kind,
        key=payload.key,
        value=payload.value,
    )


@router.put(
    "/items/{item_id}/pin", response={200: MemoryItemOut, **WRITE}, summary="Pin or unpin a memory"
)
def pin_item(request: HttpRequest, item_id: PathId, payload: PinIn) -> MemoryItem:
    user = current_user(request)
    return services.set_pinned(user=user, item=own_item(user, item_id), pinned=payload.pinned)


@router.delete("/items/{item_id}", response={204: None, **WRITE}, summary="Forget a memory")
def delete_item(request: HttpRequest, item_id: PathId) -> Status[None]:
    """409 when it was already forgotten or replaced."""
    user = current_user(request)
    services.delete_item(user=user, item=own_item(user, item_id))
    return Status(204, None)


@router.get(
    "/export",
    response={200: dict[str, Any], 401: Error},
    summary="Export your memory as the Memory page's JSON file",
)
def export(request: HttpRequest) -> dict[str, Any]:
    user = current_user(request)
    data = selectors.export_memory(user)
    services.record_export(user=user, items=len(data["items"]))
    return data


class ImportIn(Schema):
    """The export's own format (``GET /api/memory/export``): an export imports as it is."""

    model_config = body_config(
        {
            "format": "collab-memory",
            "version": 1,
            "items": [
                {"scope": "personal", "kind": "preference", "text": "I prefer bullet points"}
            ],
        }
    )
    model_config["extra"] = "allow"  # an export's own extra fields (exported_at, person, ...)

    format: Literal["collab-memory"]
    version: Literal[1]
    items: list[dict[str, Any]] = Field(
        max_length=IMPORT_MAX_ITEMS,
        description="Each: `text`, and optionally `scope` (`personal` or `workspace`), "
        "`workspace_id`, `kind`, `key`, `value`, `confidence`, `pinned`.",
    )


class ImportOut(Schema):
    added: int
    superseded: int = Field(description="Replacing an older item of yours.")
    kept: int = Field(description="Already known.")


@router.post(
    "/import",
    response={200: ImportOut, **READ},
    summary="Import a memory file (the export's format) into your own memory",
)
def import_items(request: HttpRequest, payload: ImportIn) -> dict[str, int]:
    """Reconciled like anything else you tell Collab: an item you already have is kept, one
    that changes an older one replaces it. 400 lists what is wrong with the file."""
    counts = services.import_memory(user=current_user(request), raw=request.body)
    return {key: counts.get(key, 0) for key in ("added", "superseded", "kept")}


@router.put(
    "/settings",
    response={200: SettingsOut, **READ},
    summary="Change your memory settings; `enabled: false` switches memory off",
)
def put_settings(request: HttpRequest, payload: SettingsIn) -> dict[str, Any]:
    """Fields left out keep their value."""
    user = current_user(request)
    current = selectors.get_settings(user)
    saved = services.update_settings(
        user=user,
        enabled=current.enabled if payload.enabled is None else payload.enabled,
        review_mode=payload.review_mode or current.review_mode,
        admin_access_allowed=(
            current.admin_access_allowed
            if payload.admin_access_allowed is None
            else payload.admin_access_allowed
        ),
    )
    return {
        "enabled": saved.enabled,
        "review_mode": saved.review_mode,
        "admin_access_allowed": saved.admin_access_allowed,
    }
