"""The room-facing store of the live task document: the Yjs update log, snapshots, versions,
and the SQL they need.

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
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.utils import timezone
from pycrdt import merge_updates

from collab.core import hooks
from collab.lib import ytext
from collab.tasks.models import Document, DocumentUpdate, DocumentVersion, Task

log = logging.getLogger(__name__)

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
class AppendFailure:
    """A batch that could not be written: nothing of it was stored (its transaction was rolled
    back), the other documents of the flush were; the room keeps it and retries."""

    document_id: int
    error: str


@dataclass(frozen=True)
class AppendResult:
    update_ids: list[int]
    # Rows that other writers committed after ``after_id`` and before ours: the caller has not
    # seen them yet (the relay may have dropped them).
    missed: list[tuple[int, bytes]] = field(default_factory=list)
    snapshot: bytes | None = None  # set when compaction folded rows the caller never saw
    last_update_id: int = 0
    should_compact: bool = False


# What a PostgreSQL ``text`` column cannot hold: NUL, and lone surrogates (not UTF-8 at all).
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def storable_text(text: str) -> str:
    """``text`` as any database can store it: NUL and lone surrogates become U+FFFD.

    A Yjs update may legally insert them (the update log is binary and keeps them); everything
    derived from the document as text (``Document.text``, versions, and what reads those:
    pages, search, exports, prompts) goes through here, so a document stays savable whatever
    legal content it holds."""
    return _UNSTORABLE.sub(REPLACEMENT, text) if _UNSTORABLE.search(text) else text


# --- loading ---------------------------------------------------------------------------------


def lock_document(document_id: int) -> Document:
    return Document.objects.select_for_update().get(pk=document_id)


def log_tail(document: Document, after_id: int) -> list[tuple[int, bytes]]:
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


def ensure_seeded(document: Document) -> None:
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
        document = lock_document(document_id)
        ensure_seeded(document)
    tail = log_tail(document, document.snapshot_update_id)
    parts = [bytes(document.ystate)] + [data for _, data in tail]
    state = merge_updates(*parts) if len(parts) > 1 else parts[0]
    last = tail[-1][0] if tail else document.snapshot_update_id
    return LoadedDocument(
        document_id=document_id, state=state, last_update_id=last, text=ytext.text_of(state)
    )


def list_updates_after_many(
    positions: dict[int, int],
) -> dict[int, tuple[bytes | None, list[tuple[int, bytes]]]]:
    """What rooms that have seen the given positions are missing, per document, in two queries:
    the snapshot too if compaction folded rows a room never saw, then the log rows after."""
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


# --- appending (rooms) -----------------------------------------------------------------------


def _labels(updates: Iterable[PendingUpdate]) -> list[str]:
    return list(dict.fromkeys(update.author_label for update in updates))


def add_authors(document: Document, labels: Iterable[str]) -> None:
    for label in labels:
        if label not in document.pending_authors:
            document.pending_authors.append(label)


def record_version(document: Document, *, text: str, kind: str) -> DocumentVersion:
    """Record a version (the caller saves ``pending_authors`` and ``versioned_at``)."""
    version = DocumentVersion.objects.create(
        document=document,
        text=storable_text(text),
        kind=kind,
        authors=list(document.pending_authors),
    )
    document.pending_authors = []
    document.versioned_at = version.created_at
    return version


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


def append_document_updates_many(
    requests: list[AppendRequest],
) -> dict[int, AppendResult | AppendFailure]:
    """Persist the batches of many rooms (the rooms of a web process flush together) and bring
    each ``Document.text`` and the versions in step. Documents that no longer exist are left out
    of the result.

    The batches are written in one transaction (a savepoint when the caller has one open); if
    that fails, each document is written again in a transaction of its own, so one document's
    bad batch never rolls back or holds up another's: it comes back as an ``AppendFailure``
    (nothing of it stored) and the others as ``AppendResult``. Only a failure that is not the
    data's (the database is unreachable) raises."""
    try:
        with transaction.atomic():
            return dict(_append_together(requests))
    except DatabaseError:
        if len(requests) == 1 and not connection.is_usable():
            raise
        log.warning("a flush of %d documents failed; writing each alone", len(requests))
    outcome: dict[int, AppendResult | AppendFailure] = {}
    for request in requests:
        try:
            with transaction.atomic():
                outcome.update(_append_together([request]))
        except DatabaseError as exc:
            if not connection.is_usable():
                raise
            log.exception("could not persist a batch of document %s", request.document_id)
            outcome[request.document_id] = AppendFailure(request.document_id, str(exc))
    return outcome


def _append_together(requests: list[AppendRequest]) -> dict[int, AppendResult]:
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
        ensure_seeded(document)
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
                record_version(document, text=previous, kind=DocumentVersion.Kind.BEFORE_DELETION)
            # People's typing becomes a version when it pauses (the room's checkpoint,
            # Room.version_if_paused), not at a batch's first keystrokes.
            add_authors(document, _labels(request.updates))
            document.text = text = storable_text(text)
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
        hooks.document_edited(latest_updates=edited)
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


@transaction.atomic
def checkpoint_document(*, document_id: int, text: str) -> DocumentVersion | None:
    """Record a version if anyone changed the text since the latest one (typing paused, a
    long stretch of typing, a room going idle)."""
    document = lock_document(document_id)
    if not document.pending_authors:
        return None
    version = record_version(document, text=text, kind=DocumentVersion.Kind.EDITS)
    document.save(update_fields=["pending_authors", "versioned_at"])
    return version


@transaction.atomic
def record_document_version(*, task: Task) -> DocumentVersion:
    """Record the document's current text as a version (a point to restore later, e.g. before
    an agent acts on a guess), whoever changed it."""
    document = lock_document(task.document.pk)
    text = load_document(document_id=document.pk).text
    version = record_version(document, text=text, kind=DocumentVersion.Kind.EDITS)
    document.save(update_fields=["pending_authors", "versioned_at"])
    return version


@transaction.atomic
def compact_document(*, document_id: int) -> int:
    """Fold the log into the snapshot; returns how many rows were folded. Works from the
    database alone, so it is safe whichever processes have the document loaded."""
    document = lock_document(document_id)
    ensure_seeded(document)
    tail = log_tail(document, document.snapshot_update_id)
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
