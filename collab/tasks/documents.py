"""Services for the live task document: the Yjs update log, snapshots, versions, and the one
documented way for server-side code (Celery jobs, management commands, the API) to edit it.

Storage (see docs/protocol.md "Document" and docs/adr/0004-document-rooms-and-relay.md):

* ``Document.ystate`` is a snapshot: the merged Yjs state of every ``DocumentUpdate`` with an
  id up to ``Document.snapshot_update_id``; the rows after it are the log. Loading a document is
  one merge of the snapshot and the log tail.
* Writers lock the ``Document`` row (``select_for_update``) while they append, so the ids of one
  document's rows are committed in id order and a reader that has seen id N has seen every row
  before it.
* ``Document.text`` (the plain text that pages, search, exports and prompts read) is rewritten
  with every append.
* A document that has text but no Yjs state yet is seeded with a fixed client id
  (``SEED_CLIENT_ID``), so every process seeds the same bytes and content is never duplicated.

Server-side edits (``apply_text_edit``, ``insert_at_anchor``, ``restore_document_version``) edit
a pycrdt replica as a minimal diff in one transaction, persist the update, then publish it on
commit to the live rooms (this process or others, through the relay).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone
from pycrdt import merge_updates

from collab.lib import ytext
from collab.tasks.models import Document, DocumentUpdate, DocumentVersion, Task
from collab.workspaces.models import Membership

log = logging.getLogger(__name__)

MAX_DOCUMENT_CHARS = 1_000_000
# A batch that removes at least this many characters (and at least a third of the text) first
# records the text it removes as a version, so a destructive edit can be undone from history.
LARGE_DELETION_CHARS = 200


class Origin:
    WEBSOCKET = "websocket"
    SERVICE = "service"
    RESTORE = "restore"
    SEED = "seed"


@dataclass(frozen=True)
class LoadedDocument:
    """The full Yjs state of a document as of update ``last_update_id``."""

    document_id: int
    state: bytes
    last_update_id: int
    text: str


@dataclass(frozen=True)
class PendingUpdate:
    """Updates of one author, merged, ready to append."""

    data: bytes
    author_id: int | None
    author_label: str
    origin: str = Origin.WEBSOCKET


@dataclass(frozen=True)
class AppendResult:
    update_ids: list[int]
    # Rows that other writers committed after ``after_id`` and before ours: the caller has not
    # seen them yet (the relay may have dropped them).
    missed: list[tuple[int, bytes]] = field(default_factory=list)
    snapshot: bytes | None = None  # set when compaction folded rows the caller never saw
    last_update_id: int = 0
    should_compact: bool = False


@dataclass(frozen=True)
class DocumentEdit:
    update: bytes  # empty when the new text equals the old
    update_id: int | None
    text: str
    operations: int


# --- loading ---------------------------------------------------------------------------------


def _locked_document(document_id: int) -> Document:
    return Document.objects.select_for_update().get(pk=document_id)


def _tail(document: Document, after_id: int) -> list[tuple[int, bytes]]:
    rows = (
        DocumentUpdate.objects.filter(document=document, id__gt=after_id)
        .order_by("id")
        .values_list("id", "data")
    )
    return [(row_id, bytes(data)) for row_id, data in rows]


def _ensure_seeded(document: Document) -> None:
    """Give a text-only document its deterministic Yjs seed (caller holds the row lock)."""
    if document.ystate or document.snapshot_update_id or document.updates.exists():
        return
    document.ystate = ytext.seed_update(document.text)
    document.save(update_fields=["ystate"])


@transaction.atomic
def load_document(*, document_id: int) -> LoadedDocument:
    """The document's current persisted state: snapshot plus log tail, merged once."""
    document = Document.objects.get(pk=document_id)
    if not document.ystate and not document.snapshot_update_id:
        document = _locked_document(document_id)
        _ensure_seeded(document)
    tail = _tail(document, document.snapshot_update_id)
    parts = [bytes(document.ystate)] + [data for _, data in tail]
    state = merge_updates(*parts) if len(parts) > 1 else parts[0]
    last = tail[-1][0] if tail else document.snapshot_update_id
    return LoadedDocument(
        document_id=document_id, state=state, last_update_id=last, text=ytext.text_of(state)
    )


def list_updates_after(
    *, document_id: int, after_id: int
) -> tuple[bytes | None, list[tuple[int, bytes]]]:
    """What a room that has seen ``after_id`` is missing: the snapshot too if compaction
    folded rows it never saw, then the log rows after ``after_id``."""
    document = Document.objects.only("snapshot_update_id", "ystate").get(pk=document_id)
    snapshot = bytes(document.ystate) if document.snapshot_update_id > after_id else None
    return snapshot, _tail(document, max(after_id, 0))


# --- appending (rooms) -----------------------------------------------------------------------


def _labels(updates: Iterable[PendingUpdate]) -> list[str]:
    return list(dict.fromkeys(update.author_label for update in updates))


def _add_authors(document: Document, labels: Iterable[str]) -> None:
    for label in labels:
        if label not in document.pending_authors:
            document.pending_authors.append(label)


def _record_version(document: Document, *, text: str, kind: str) -> DocumentVersion:
    version = DocumentVersion.objects.create(
        document=document, text=text, kind=kind, authors=list(document.pending_authors)
    )
    document.pending_authors = []
    return version


def _version_due(document: Document) -> bool:
    latest = document.versions.order_by("-id").only("created_at").first()
    interval = timedelta(seconds=settings.DOCUMENT_VERSION_INTERVAL)
    return latest is None or timezone.now() - latest.created_at >= interval


def _is_large_deletion(before: str, after: str) -> bool:
    removed = len(before) - len(after)
    return removed >= LARGE_DELETION_CHARS and removed * 3 >= len(before)


@transaction.atomic
def append_document_updates(
    *,
    document_id: int,
    updates: list[PendingUpdate],
    text: str | None,
    previous_text: str | None,
    after_id: int,
) -> AppendResult:
    """Persist one batch from a room and bring ``Document.text`` and the versions in step.

    ``text`` is the room's text including this batch (``None`` to leave the column alone),
    ``previous_text`` the text the room last wrote, ``after_id`` the last row the room has seen.
    """
    document = _locked_document(document_id)
    _ensure_seeded(document)
    snapshot = bytes(document.ystate) if after_id < document.snapshot_update_id else None
    missed = _tail(document, after_id)
    rows = DocumentUpdate.objects.bulk_create(
        [
            DocumentUpdate(
                document=document,
                data=update.data,
                author_id=update.author_id,
                author_label=update.author_label[:200],
                origin=update.origin,
            )
            for update in updates
        ]
    )
    update_ids = [row.pk for row in rows]
    if not all(update_ids):  # backends without RETURNING: read them back
        update_ids = list(
            DocumentUpdate.objects.filter(document=document, id__gt=after_id)
            .order_by("-id")
            .values_list("id", flat=True)[: len(rows)]
        )[::-1]
    fields = ["updated_at"]
    if text is not None:
        if previous_text is not None and _is_large_deletion(previous_text, text):
            _record_version(document, text=previous_text, kind=DocumentVersion.Kind.BEFORE_DELETION)
        _add_authors(document, _labels(updates))
        if updates and _version_due(document):
            _record_version(document, text=text, kind=DocumentVersion.Kind.EDITS)
        document.text = text
        fields += ["text", "pending_authors"]
    document.save(update_fields=fields)
    last = max([after_id, document.snapshot_update_id, *update_ids, *(i for i, _ in missed)])
    backlog = DocumentUpdate.objects.filter(
        document=document, id__gt=document.snapshot_update_id
    ).count()
    if update_ids and any(update.author_id for update in updates):
        from agents.services import document_edited  # agents depend on tasks, not back

        document_edited(task_id=document.task_id, update_id=max(update_ids))
    return AppendResult(
        update_ids=update_ids,
        missed=missed,
        snapshot=snapshot,
        last_update_id=last,
        should_compact=backlog >= settings.DOCUMENT_COMPACT_AFTER,
    )


@transaction.atomic
def checkpoint_document(*, document_id: int, text: str) -> DocumentVersion | None:
    """Record a version if anyone changed the text since the latest one (rooms going idle)."""
    document = _locked_document(document_id)
    if not document.pending_authors:
        return None
    version = _record_version(document, text=text, kind=DocumentVersion.Kind.EDITS)
    document.save(update_fields=["pending_authors"])
    return version


@transaction.atomic
def compact_document(*, document_id: int) -> int:
    """Fold the log into the snapshot; returns how many rows were folded. Works from the
    database alone, so it is safe whichever processes have the document loaded."""
    document = _locked_document(document_id)
    _ensure_seeded(document)
    tail = _tail(document, document.snapshot_update_id)
    if not tail:
        return 0
    document.ystate = merge_updates(bytes(document.ystate), *(data for _, data in tail))
    previous, document.snapshot_update_id = document.snapshot_update_id, tail[-1][0]
    document.snapshot_at = timezone.now()
    document.save(update_fields=["ystate", "snapshot_update_id", "snapshot_at"])
    # The rows stay (who changed the document, and when) without their Yjs bytes.
    DocumentUpdate.objects.filter(
        document=document, id__gt=previous, id__lte=document.snapshot_update_id
    ).update(data=b"")
    return len(tail)


# --- server-side edits -----------------------------------------------------------------------


@dataclass(frozen=True)
class DocumentRead:
    """What a server-side editor read: pass it back as ``base`` so that an edit computed from
    a stale read merges with everything written since instead of overwriting it."""

    document_id: int
    text: str
    state: bytes
    update_id: int


def read_document(*, task: Task) -> DocumentRead:
    loaded = load_document(document_id=task.document.pk)
    return DocumentRead(
        document_id=loaded.document_id,
        text=loaded.text,
        state=loaded.state,
        update_id=loaded.last_update_id,
    )


def _check_text(new_text: str) -> None:
    if len(new_text) > MAX_DOCUMENT_CHARS:
        raise ValidationError(
            {"text": f"Documents are limited to {MAX_DOCUMENT_CHARS:,} characters."}
        )
    if "\x00" in new_text:
        raise ValidationError({"text": "The text contains a NUL character."})


def _edit(
    *,
    task: Task,
    author_label: str,
    author: User | None,
    origin: str,
    base: DocumentRead | None,
    change: ytext.TextChange,
    version_kind: str,
) -> DocumentEdit:
    from collab.realtime import relay  # the realtime layer imports tasks, not the reverse

    document = _locked_document(task.document.pk)
    _ensure_seeded(document)
    tail = _tail(document, document.snapshot_update_id)
    current_state = merge_updates(bytes(document.ystate), *(data for _, data in tail))
    replica_state = current_state if base is None else base.state
    replica, replica_text = ytext.doc_from_updates(replica_state)
    before = replica.get_state()
    old_text = str(replica_text)
    new_text = change(old_text)
    _check_text(new_text)
    with replica.transaction(origin=f"{origin}:{author_label}"):
        operations = ytext.apply_diff(replica_text, old_text, new_text)
    if not operations:
        return DocumentEdit(update=b"", update_id=None, text=document.text, operations=0)
    update = replica.get_update(before)
    _merged, merged_text = ytext.doc_from_updates(current_state, update)
    text = str(merged_text)
    if document.pending_authors:
        _record_version(document, text=document.text, kind=DocumentVersion.Kind.EDITS)
    row = DocumentUpdate.objects.create(
        document=document,
        data=update,
        author=author,
        author_label=author_label[:200],
        origin=origin,
    )
    document.text = text
    document.pending_authors = [author_label]
    _record_version(document, text=text, kind=version_kind)
    document.save(update_fields=["text", "pending_authors", "updated_at"])
    Task.objects.filter(pk=task.pk).update(updated_at=timezone.now())
    document_id = document.pk
    transaction.on_commit(lambda: relay.publish_update(document_id, update))
    return DocumentEdit(update=update, update_id=row.pk, text=text, operations=operations)


@transaction.atomic
def apply_text_edit(
    *,
    task: Task,
    new_text: str,
    author_label: str,
    author: User | None = None,
    origin: str = Origin.SERVICE,
    base: DocumentRead | None = None,
) -> DocumentEdit:
    """Change the document so that it reads ``new_text`` — as a minimal diff.

    The diff is computed against ``base`` (what the caller read, possibly stale) or else the
    latest persisted state; concurrent edits made since are kept, not overwritten. The update is
    persisted, ``Document.text`` rewritten, a version recorded under ``author_label`` (a person,
    or an agent and its turn), and the update published to live rooms on commit.
    """
    return _edit(
        task=task,
        author_label=author_label,
        author=author,
        origin=origin,
        base=base,
        change=lambda _old: new_text,
        version_kind=DocumentVersion.Kind.SERVICE,
    )


@transaction.atomic
def insert_at_anchor(
    *,
    task: Task,
    anchor: str,
    text: str,
    author_label: str,
    author: User | None = None,
    after: bool = True,
) -> DocumentEdit:
    """Insert ``text`` right after (or before) the first occurrence of ``anchor``; an empty
    anchor means the end (after) or the start (before) of the document."""

    def change(old: str) -> str:
        if not anchor:
            return old + text if after else text + old
        index = old.find(anchor)
        if index < 0:
            raise ValidationError({"anchor": "The anchor text is not in the document."})
        at = index + len(anchor) if after else index
        return old[:at] + text + old[at:]

    return _edit(
        task=task,
        author_label=author_label,
        author=author,
        origin=Origin.SERVICE,
        base=None,
        change=change,
        version_kind=DocumentVersion.Kind.SERVICE,
    )


@transaction.atomic
def restore_document_version(
    *, membership: Membership, task: Task, version_id: int
) -> DocumentEdit:
    """Make the document read like an earlier version again, as a new edit (history is kept)."""
    if not membership.can_edit:
        raise PermissionDenied("Viewers can read but not change this workspace.")
    if task.workspace_id != membership.workspace_id:
        raise PermissionDenied("That task belongs to another workspace.")
    version = DocumentVersion.objects.filter(pk=version_id, document__task=task).first()
    if version is None:
        raise ValidationError({"version": "No such version of this document."})
    return _edit(
        task=task,
        author_label=membership.user.get_username(),
        author=membership.user,
        origin=Origin.RESTORE,
        base=None,
        change=lambda _old: version.text,
        version_kind=DocumentVersion.Kind.RESTORE,
    )
