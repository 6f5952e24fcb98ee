"""The server-side edit API of the live task document: the one documented way for Celery jobs,
management commands, the API and page views to change it (docs/protocol.md "Server-side edits").

Each edit is a minimal diff on a pycrdt replica (of the state the caller read, possibly stale)
in one Yjs transaction; the update is persisted, ``Document.text`` rewritten, a version
recorded, and on commit the update is published to the live rooms (this process or others,
through the relay).
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from pycrdt import merge_updates

from collab.lib import ytext
from collab.lib.errors import Conflict
from collab.realtime import relay
from collab.tasks.documents import store
from collab.tasks.models import Document, DocumentUpdate, DocumentVersion, Task
from collab.workspaces.models import Membership
from collab.workspaces.permissions import require_task_editor

MAX_DOCUMENT_CHARS = 1_000_000


@dataclass(frozen=True)
class DocumentEdit:
    update: bytes  # empty when the new text equals the old
    update_id: int | None
    text: str
    operations: int


@dataclass(frozen=True)
class DocumentRead:
    """What a server-side editor read: pass it back as ``base`` so that an edit computed from
    a stale read merges with everything written since instead of overwriting it."""

    document_id: int
    text: str
    state: bytes
    update_id: int


def read_document(*, task: Task) -> DocumentRead:
    loaded = store.load_document(document_id=task.document.pk)
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
    document = store.lock_document(task.document.pk)
    store.ensure_seeded(document)
    tail = store.log_tail(document, document.snapshot_update_id)
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
    merged, merged_text = ytext.doc_from_updates(current_state, update)
    if len(merged.get_update()) > settings.DOCUMENT_MAX_BYTES:
        raise ValidationError(
            {"text": f"Documents are limited to {settings.DOCUMENT_MAX_BYTES:,} bytes."}
        )
    text = str(merged_text)
    if any(label != author_label for label in document.pending_authors):
        # Someone else changed the text since the latest version: keep it as it was.
        store.record_version(document, text=document.text, kind=DocumentVersion.Kind.EDITS)
    row = DocumentUpdate.objects.create(
        document=document,
        data=update,
        author=author,
        author_label=author_label[:200],
        origin=origin,
    )
    document.text = store.storable_text(text)
    document.log_length += 1
    store.add_authors(document, [author_label])
    if record_version:
        store.record_version(document, text=text, kind=version_kind)
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
    origin: str = store.Origin.SERVICE,
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
            origin=store.Origin.SERVICE,
            base=None,
            change=change,
            version_kind=DocumentVersion.Kind.SERVICE,
        )
    except _Gone:
        return None


def read_document_at(*, task: Task, version: int) -> DocumentRead:
    """What a reader of ``version`` (an ``update_id`` of ``read_document``) saw: the snapshot
    plus the log rows up to it. ``Conflict`` once compaction has folded that point into the
    snapshot (its state can no longer be rebuilt, so an edit of it could not be merged)."""
    current = read_document(task=task)
    if version == current.update_id:
        return current
    if version > current.update_id:
        raise ValidationError({"base_version": "The document has no such version yet."})
    document = Document.objects.only("ystate", "snapshot_update_id").get(pk=current.document_id)
    if version < document.snapshot_update_id:
        raise Conflict(
            f"Version {version} of the document can no longer be merged (the history before "
            f"{document.snapshot_update_id} was compacted): read the document again and redo "
            "the edit on its current version."
        )
    rows = DocumentUpdate.objects.filter(
        document_id=current.document_id, id__gt=document.snapshot_update_id, id__lte=version
    ).order_by("id")
    parts = [bytes(document.ystate), *(bytes(data) for data in rows.values_list("data", flat=True))]
    state = merge_updates(*parts) if len(parts) > 1 else parts[0]
    return DocumentRead(
        document_id=current.document_id, text=ytext.text_of(state), state=state, update_id=version
    )


@transaction.atomic
def edit_document_text(
    *, membership: Membership, task: Task, new_text: str, base_version: int
) -> DocumentEdit:
    """A person's edit that makes the document read ``new_text``, computed against the version
    they read (``base_version``) as a minimal diff, so that what others wrote since is kept."""
    require_task_editor(membership, task)
    base = read_document_at(task=task, version=base_version)
    return apply_text_edit(
        task=task,
        new_text=new_text,
        author_label=membership.user.get_username(),
        author=membership.user,
        base=base,
    )


@transaction.atomic
def restore_document_version(
    *, membership: Membership, task: Task, version_id: int
) -> DocumentEdit:
    """Make the document read like an earlier version again, as a new edit (history is kept)."""
    require_task_editor(membership, task)
    version = DocumentVersion.objects.filter(pk=version_id, document__task=task).first()
    if version is None:
        raise ValidationError({"version": "No such version of this document."})
    return _edit(
        task=task,
        author_label=membership.user.get_username(),
        author=membership.user,
        origin=store.Origin.RESTORE,
        base=None,
        change=lambda _old: version.text,
        version_kind=DocumentVersion.Kind.RESTORE,
    )
