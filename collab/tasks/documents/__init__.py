"""The live task document: ``store`` (what rooms read and write: the Yjs update log, snapshots,
versions, and their SQL) and ``edits`` (the server-side edit API that agents, jobs, commands and
views use). Import from here; see docs/protocol.md "Document"."""

from __future__ import annotations

from collab.tasks.documents.edits import (
    MAX_DOCUMENT_CHARS,
    DocumentEdit,
    DocumentRead,
    apply_text_edit,
    edit_document_text,
    next_base,
    read_document,
    read_document_at,
    replace_in_document,
    restore_document_version,
)
from collab.tasks.documents.store import (
    AppendFailure,
    AppendRequest,
    AppendResult,
    LoadedDocument,
    Origin,
    PendingUpdate,
    append_document_updates_many,
    checkpoint_document,
    compact_document,
    list_updates_after_many,
    load_document,
    record_document_version,
    storable_text,
)

__all__ = [
    "MAX_DOCUMENT_CHARS",
    "AppendFailure",
    "AppendRequest",
    "AppendResult",
    "DocumentEdit",
    "DocumentRead",
    "LoadedDocument",
    "Origin",
    "PendingUpdate",
    "append_document_updates_many",
    "apply_text_edit",
    "checkpoint_document",
    "compact_document",
    "edit_document_text",
    "list_updates_after_many",
    "load_document",
    "next_base",
    "read_document",
    "read_document_at",
    "record_document_version",
    "replace_in_document",
    "restore_document_version",
    "storable_text",
]
