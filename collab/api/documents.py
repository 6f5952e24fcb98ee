"""/api/tasks/{id}/document: read the live document with its version, edit it against the
version you read (merged with what others wrote since, as a minimal change), its history of
versions, and restoring one. Everything goes through ``collab.tasks.documents``."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from collab.api.auth import current_user
from collab.api.pagination import PageFields, PageQuery, cursor_page
from collab.api.schemas import MAX_ID, BadRequest, Error, PathId, StoredText, body_config
from collab.tasks import documents
from collab.tasks.models import DocumentVersion, Task
from collab.tasks.selectors import document_versions, get_document_version, get_task_access

router = Router(tags=["documents"])

READ = {400: BadRequest, 401: Error, 404: Error}
WRITE = {**READ, 403: Error, 409: Error}


class LiveDocumentOut(Schema):
    text: str = Field(description="The document as plain markdown text.")
    version: int = Field(
        description="What you read: send it back as `base_version` with your edit."
    )


class DocumentEditIn(Schema):
    model_config = body_config({"text": "# Agenda\n\n- 9:00 coffee\n", "base_version": 41})

    text: StoredText = Field(
        description="The whole document as you want it to read, up to "
        f"{documents.MAX_DOCUMENT_CHARS:,} characters.",
        json_schema_extra={"maxLength": documents.MAX_DOCUMENT_CHARS},
    )
    base_version: int = Field(
        ge=0, le=MAX_ID, description="The `version` you read and edited (GET .../document)."
    )


class DocumentEditOut(LiveDocumentOut):
    operations: int = Field(description="How many insertions and deletions the change took.")


class VersionOut(Schema):
    id: int
    kind: DocumentVersion.Kind = Field(
        description="`edits` (people typing), `before_deletion`, `service` (an agent or the "
        "API), `restore`."
    )
    authors: list[str] = Field(description="Who changed the text since the version before.")
    text: str
    created_at: datetime


class VersionPage(PageFields):
    versions: list[VersionOut] = Field(description="Oldest first.")


def _live(task: Task) -> dict[str, Any]:
    read = documents.read_document(task=task)
    return {"text": read.text, "version": read.update_id}


@router.get(
    "/{task_id}/document",
    response={200: LiveDocumentOut, **READ},
    summary="Read a task's live document and its version (any member)",
)
def get_document(request: HttpRequest, task_id: PathId) -> dict[str, Any]:
    return _live(get_task_access(current_user(request), task_id).task)


@router.put(
    "/{task_id}/document",
    response={200: DocumentEditOut, **WRITE},
    summary="Edit the document against the version you read (owners and editors)",
)
def put_document(request: HttpRequest, task_id: PathId, payload: DocumentEditIn) -> dict[str, Any]:
    """Your change (from `base_version` to `text`) is applied as a minimal edit and merged with
    whatever others wrote since, as a co-editor's would be. 409 when that version can no longer
    be merged (the history was compacted past it): read again and redo the edit."""
    access = get_task_access(current_user(request), task_id)
    edit = documents.edit_document_text(
        membership=access.membership,
        task=access.task,
        new_text=payload.text,
        base_version=payload.base_version,
    )
    return {**_live(access.task), "operations": edit.operations}


@router.get(
    "/{task_id}/document/versions",
    response={200: VersionPage, **READ},
    summary="List the document's versions, newest page first (any member)",
)
def list_versions(request: HttpRequest, task_id: PathId, page: Query[PageQuery]) -> dict[str, Any]:
    access = get_task_access(current_user(request), task_id)
    found = cursor_page(document_versions(access.task), page)
    return {"versions": found.rows, **found.fields()}


@router.post(
    "/{task_id}/document/versions/{version_id}/restore",
    response={200: DocumentEditOut, **WRITE},
    summary="Make the document read like an earlier version again (owners and editors)",
)
def restore_version(request: HttpRequest, task_id: PathId, version_id: PathId) -> dict[str, Any]:
    """A new edit: the history keeps every version, this restore included."""
    access = get_task_access(current_user(request), task_id)
    version = get_document_version(access.task, version_id)
    edit = documents.restore_document_version(
        membership=access.membership, task=access.task, version_id=version.pk
    )
    return {**_live(access.task), "operations": edit.operations}
