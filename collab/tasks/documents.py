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
from typing import Any

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import connection, transaction
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


def _rows_after(positions: dict[int, int]) -> dict[int, list[tuple[int, bytes]]]:
    """Log rows after a position per document, in one query. Built as plain SQL: the ORM's
    OR-of-filters costs milliseconds of Python per hundred documents on the flush path."""
    found: dict[int, list[tuple[int, bytes]]] = {pk: [] for pk in positions}
    if not positions:
        return found
    table = connection.ops.quote_name(DocumentUpdate._meta.db_table)
    where = " OR ".join(["(document_id = %s AND id > %s)"] * len(positions))
    params = [value for pk, after in positions.items() for value in (pk, max(after, 0))]
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT document_id, id, data FROM {table} WHERE {where} ORDER BY id",  # noqa: S608
            params,
        )
        for document_id, row_id, data in cursor.fetchall():
            found[document_id].append((row_id, bytes(data)))
    return found


def _ensure_seeded(document: Document) -> None:
    """Give a text-only document its deterministic Yjs seed (caller holds the row lock)."""
    if document.snapshot_update_id or document.log_length:
        return
    if document.ystate or document.updates.exists():
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


def list_updates_after_many(
    positions: dict[int, int],
) -> dict[int, tuple[bytes | None, list[tuple[int, bytes]]]]:
    """``list_updates_after`` for many documents in two queries (rooms catch up together)."""
    if not positions:
        return {}
    snapshots = dict(
        Document.objects.filter(pk__in=positions).values_list("pk", "snapshot_update_id")
    )
    behind = [pk for pk, snapshot_id in snapshots.items() if snapshot_id > positions[pk]]
    states = dict(Document.objects.filter(pk__in=behind).values_list("pk", "ystate"))
    rows = _rows_after({pk: after for pk, after in positions.items() if pk in snapshots})
    return {
        pk: (bytes(states[pk]) if pk in states else None, rows[pk])
        for pk in snapshots
        if pk in states or rows[pk]
    }


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
    """Record a version (the caller saves ``pending_authors`` and ``versioned_at``)."""
    version = DocumentVersion.objects.create(
        document=document, text=text, kind=kind, authors=list(document.pending_authors)
    )
    document.pending_authors = []
    document.versioned_at = version.created_at
    return version


def _version_due(document: Document) -> bool:
    interval = timedelta(seconds=settings.DOCUMENT_VERSION_INTERVAL)
    return document.versioned_at is None or timezone.now() - document.versioned_at >= interval


def _is_large_deletion(before: str, after: str) -> bool:
    removed = len(before) - len(after)
    return removed >= LARGE_DELETION_CHARS and removed * 3 >= len(before)


@dataclass(frozen=True)
class AppendRequest:
    """One room's batch: ``text`` is the room's text including it (``None`` leaves the column
    alone), ``previous_text`` the text it last wrote, ``after_id`` the last row it has seen."""

    document_id: int
    updates: list[PendingUpdate]
    text: str | None
    previous_text: str | None
    after_id: int


def _insert_updates(rows: list[tuple[int, PendingUpdate]]) -> list[int]:
    """Insert log rows with one ``INSERT … RETURNING id`` (PostgreSQL, SQLite ≥ 3.35), ids in
    row order. ``bulk_create`` spends more Python time per row than the write itself."""
    if not rows:
        return []
    table = connection.ops.quote_name(DocumentUpdate._meta.db_table)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    values = ", ".join(["(%s, %s, %s, %s, %s, %s)"] * len(rows))
    params: list[Any] = []
    for document_id, update in rows:
        params += [
            document_id,
            update.data,
            update.author_id,
            update.author_label[:200],
            update.origin,
            now,
        ]
    sql = (
        f"INSERT INTO {table} (document_id, data, author_id, author_label, origin, created_at)"  # noqa: S608
        f" VALUES {values} RETURNING id"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        # ids grow in insertion order; sorting guards against a RETURNING in another order
        return sorted(row_id for (row_id,) in cursor.fetchall())


@transaction.atomic
def append_document_updates_many(requests: list[AppendRequest]) -> dict[int, AppendResult]:
    """Persist the batches of many rooms in one transaction (the rooms of a web process flush
    together) and bring each ``Document.text`` and the versions in step. Documents that no
    longer exist are left out of the result."""
    by_id = {request.document_id: request for request in requests}
    # Locked in id order, so that two processes flushing the same documents cannot deadlock;
    # neither the snapshot nor the old text is read unless needed.
    locked = {
        document.pk: document
        for document in Document.objects.select_for_update()
        .defer("ystate", "text")
        .filter(pk__in=by_id)
        .order_by("pk")
    }
    for document in locked.values():
        _ensure_seeded(document)
    missed = _rows_after({pk: by_id[pk].after_id for pk in locked})
    new_rows = [(pk, update) for pk in locked for update in by_id[pk].updates]
    update_ids: dict[int, list[int]] = {pk: [] for pk in locked}
    for (pk, _), row_id in zip(new_rows, _insert_updates(new_rows), strict=True):
        update_ids[pk].append(row_id)
    results = {}
    plain: list[tuple[str | None, int, int]] = []  # (text or None, log_length, pk)
    edited: dict[int, int] = {}  # task id -> newest update id written by a person
    for pk, document in locked.items():
        request = by_id[pk]
        document.log_length += len(update_ids[pk])
        authors_before = list(document.pending_authors)
        versioned_before = document.versioned_at
        text = request.text
        if text is not None:
            previous = request.previous_text
            if previous is not None and _is_large_deletion(previous, text):
                _record_version(document, text=previous, kind=DocumentVersion.Kind.BEFORE_DELETION)
            _add_authors(document, _labels(request.updates))
            if request.updates and _version_due(document):
                _record_version(document, text=text, kind=DocumentVersion.Kind.EDITS)
            document.text = text
        if document.pending_authors != authors_before or document.versioned_at != versioned_before:
            fields = ["log_length", "pending_authors", "versioned_at", "updated_at"]
            document.save(update_fields=[*fields, "text"] if text is not None else fields)
        else:
            plain.append((text, document.log_length, pk))
        ids = update_ids[pk]
        if ids and any(update.author_id for update in request.updates):
            edited[document.task_id] = max(ids)
        results[pk] = AppendResult(
            update_ids=ids,
            missed=missed[pk],
            snapshot=(
                bytes(document.ystate) if request.after_id < document.snapshot_update_id else None
            ),
            last_update_id=max(
                [request.after_id, document.snapshot_update_id, *ids, *(i for i, _ in missed[pk])]
            ),
            should_compact=document.log_length >= settings.DOCUMENT_COMPACT_AFTER,
        )
    _write_plain(plain)
    if edited:
        from agents.services import documents_edited  # agents depend on tasks, not back

        documents_edited(latest_updates=edited)
    return results


def _write_plain(rows: list[tuple[str | None, int, int]]) -> None:
    """The common flush (no new author, no version): one prepared UPDATE for every document.
    ``Model.save``/``bulk_update`` cost more Python time than the database write itself, and
    this runs for every batch of every room."""
    table = connection.ops.quote_name(Document._meta.db_table)
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with_text = [(text, length, now, pk) for text, length, pk in rows if text is not None]
    without_text = [(length, now, pk) for text, length, pk in rows if text is None]
    with connection.cursor() as cursor:
        if with_text:
            cursor.executemany(
                f"UPDATE {table} SET text = %s, log_length = %s, updated_at = %s WHERE id = %s",  # noqa: S608
                with_text,
            )
        if without_text:
            cursor.executemany(
                f"UPDATE {table} SET log_length = %s, updated_at = %s WHERE id = %s",  # noqa: S608
                without_text,
            )


def append_document_updates(
    *,
    document_id: int,
    updates: list[PendingUpdate],
    text: str | None,
    previous_text: str | None,
    after_id: int,
) -> AppendResult:
    """Persist one room's batch (see ``append_document_updates_many``)."""
    request = AppendRequest(document_id, updates, text, previous_text, after_id)
    results = append_document_updates_many([request])
    if document_id not in results:
        raise Document.DoesNotExist(f"document {document_id} no longer exists")
    return results[document_id]


@transaction.atomic
def checkpoint_document(*, document_id: int, text: str) -> DocumentVersion | None:
    """Record a version if anyone changed the text since the latest one (rooms going idle)."""
    document = _locked_document(document_id)
    if not document.pending_authors:
        return None
    version = _record_version(document, text=text, kind=DocumentVersion.Kind.EDITS)
    document.save(update_fields=["pending_authors", "versioned_at"])
    return version


@transaction.atomic
def record_document_version(*, task: Task) -> DocumentVersion:
    """Record the document's current text as a version (a point to restore later, e.g. before
    an agent acts on a guess), whoever changed it."""
    document = _locked_document(task.document.pk)
    text = load_document(document_id=document.pk).text
    version = _record_version(document, text=text, kind=DocumentVersion.Kind.EDITS)
    document.save(update_fields=["pending_authors", "versioned_at"])
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
    document.log_length = 0
    document.save(update_fields=["ystate", "snapshot_update_id", "snapshot_at", "log_length"])
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
    record_version: bool = True,
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
    if any(label != author_label for label in document.pending_authors):
        # Someone else changed the text since the latest version: keep it as it was.
        _record_version(document, text=document.text, kind=DocumentVersion.Kind.EDITS)
    row = DocumentUpdate.objects.create(
        document=document,
        data=update,
        author=author,
        author_label=author_label[:200],
        origin=origin,
    )
    document.text = text
    document.log_length += 1
    _add_authors(document, [author_label])
    if record_version:
        _record_version(document, text=text, kind=version_kind)
    document.save(
        update_fields=["text", "pending_authors", "versioned_at", "log_length", "updated_at"]
    )
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
    record_version: bool = True,
) -> DocumentEdit:
    """Change the document so that it reads ``new_text`` — as a minimal diff.

    The diff is computed against ``base`` (what the caller read, possibly stale) or else the
    latest persisted state; concurrent edits made since are kept, not overwritten. The update is
    persisted, ``Document.text`` rewritten, a version recorded under ``author_label`` (a person,
    or an agent and its turn), and the update published to live rooms on commit.

    ``record_version=False`` is for the steps of an edit typed live (``next_base`` chains
    them): the author is remembered and the version is recorded by the last step.
    """
    return _edit(
        task=task,
        author_label=author_label,
        author=author,
        origin=origin,
        base=base,
        change=lambda _old: new_text,
        version_kind=DocumentVersion.Kind.SERVICE,
        record_version=record_version,
    )


def next_base(base: DocumentRead, edit: DocumentEdit, *, text: str) -> DocumentRead:
    """What an editor that read ``base`` and then made ``edit`` (whose replica text became
    ``text``) knows: pass it as the ``base`` of its next step."""
    if not edit.update:
        return base
    return DocumentRead(
        document_id=base.document_id,
        text=text,
        state=merge_updates(base.state, edit.update),
        update_id=edit.update_id or base.update_id,
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
def replace_in_document(
    *,
    task: Task,
    find: str,
    replace: str,
    author_label: str,
    author: User | None = None,
) -> DocumentEdit | None:
    """Replace the first occurrence of ``find`` (an empty ``find`` appends) in the latest
    persisted text, as a minimal diff; ``None`` when ``find`` is no longer there. Prefer this to
    computing a new text from ``Document.text``, which may lag the update log by one batch."""

    class _Gone(Exception):
        pass

    def change(old: str) -> str:
        if not find:
            return old + replace
        index = old.find(find)
        if index < 0:
            raise _Gone
        return old[:index] + replace + old[index + len(find) :]

    try:
        return _edit(
            task=task,
            author_label=author_label,
            author=author,
            origin=Origin.SERVICE,
            base=None,
            change=change,
            version_kind=DocumentVersion.Kind.SERVICE,
        )
    except _Gone:
        return None


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
