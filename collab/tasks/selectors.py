"""Reads of tasks and chat that check membership through the workspace selectors."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from datetime import datetime

from django.conf import settings
from django.db.models import QuerySet
from django.http import Http404

from collab.lib.textdiff import ChangeSize, change_size
from collab.tasks.models import DocumentUpdate, DocumentVersion, Message, Task, TaskStatus
from collab.workspaces.models import Membership, Workspace
from collab.workspaces.selectors import AnyUser, get_membership


@dataclass(frozen=True)
class TaskAccess:
    """A task together with the reader's membership (for role checks)."""

    task: Task
    membership: Membership

    @property
    def can_edit(self) -> bool:
        return self.membership.can_edit


def get_task_access(user: AnyUser, task_id: int) -> TaskAccess:
    if not user.is_authenticated:
        raise Http404("No such task.")
    task = Task.objects.select_related("workspace").filter(pk=task_id).first()
    if task is None:
        raise Http404("No such task.")
    membership = get_membership(user, task.workspace_id)
    return TaskAccess(task=task, membership=membership)


def get_task_for_user(user: AnyUser, task_id: int) -> Task:
    return get_task_access(user, task_id).task


def list_tasks(workspace: Workspace, *, status: str | None = None) -> QuerySet[Task]:
    tasks = workspace.tasks.all()
    if status:
        if status not in TaskStatus.values:
            raise ValueError(f"Unknown status {status!r}.")
        tasks = tasks.filter(status=status)
    return tasks.order_by("-updated_at", "-id")


def list_messages(
    task: Task, *, before: int | None = None, limit: int | None = None
) -> list[Message]:
    """The newest ``limit`` messages older than ``before``, oldest first."""
    limit = page_size() if limit is None else limit
    messages = task.messages.all()
    if before is not None:
        messages = messages.filter(id__lt=before)
    page = list(messages.order_by("-id")[:limit])
    page.reverse()
    return page


def list_messages_after(task: Task, *, after: int, limit: int | None = None) -> list[Message]:
    """The first ``limit`` messages newer than ``after``, oldest first (a resync after a gap)."""
    limit = page_size() if limit is None else limit
    return list(task.messages.filter(id__gt=after).order_by("id")[:limit])


def page_size() -> int:
    return int(settings.CHAT_PAGE_SIZE)


# --- document history (the task comes from get_task_access, so the reader is a member) ------


def list_document_versions(task: Task, *, limit: int = 50) -> list[DocumentVersion]:
    """The newest versions of the task's document first (text, kind, authors, time)."""
    return list(DocumentVersion.objects.filter(document__task=task).order_by("-id")[:limit])


def document_versions(task: Task) -> QuerySet[DocumentVersion]:
    """Every version of the task's document (the API pages them by id)."""
    return DocumentVersion.objects.filter(document__task=task)


def get_document_version(task: Task, version_id: int) -> DocumentVersion:
    version = DocumentVersion.objects.filter(pk=version_id, document__task=task).first()
    if version is None:
        raise Http404("No such version.")
    return version


def document_version_diff(version: DocumentVersion) -> str:
    """A unified diff from the previous version (or the empty document) to ``version``."""
    previous = (
        DocumentVersion.objects.filter(document_id=version.document_id, id__lt=version.pk)
        .order_by("-id")
        .only("text")
        .first()
    )
    before = previous.text if previous is not None else ""
    return "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            version.text.splitlines(keepends=True),
            fromfile="previous" if previous is not None else "empty",
            tofile=f"version {version.pk}",
        )
    )


@dataclass(frozen=True)
class Contribution:
    """A run of consecutive persisted changes by one author."""

    author_label: str
    author_id: int | None
    origin: str
    first_at: datetime
    last_at: datetime
    changes: int


def list_document_contributions(task: Task, *, limit: int = 100) -> list[Contribution]:
    """Who changed the document and when, newest first, from the update log (consecutive
    batches by the same author are grouped)."""
    rows = (
        DocumentUpdate.objects.filter(document__task=task)
        .order_by("-id")
        .values_list("author_label", "author_id", "origin", "created_at")[: limit * 20]
    )
    runs: list[Contribution] = []
    for label, author_id, origin, created_at in rows:
        last = runs[-1] if runs else None
        if last is not None and (last.author_label, last.origin) == (label, origin):
            runs[-1] = Contribution(
                label, author_id, origin, created_at, last.last_at, last.changes + 1
            )
        elif len(runs) == limit:
            break
        else:
            runs.append(Contribution(label, author_id, origin, created_at, created_at, 1))
    return runs


# --- document history page (sizes and previous texts for the version list and diffs) --------


@dataclass(frozen=True)
class VersionSummary:
    """A version of the task document and how much it changed since the one before."""

    version: DocumentVersion
    size: ChangeSize


def list_version_summaries(task: Task, *, limit: int = 50) -> list[VersionSummary]:
    """The newest ``limit`` versions, newest first, each sized against its predecessor."""
    versions = list_document_versions(task, limit=limit + 1)
    summaries = []
    for index, version in enumerate(versions[:limit]):
        previous = versions[index + 1].text if index + 1 < len(versions) else ""
        summaries.append(VersionSummary(version=version, size=change_size(previous, version.text)))
    return summaries


def get_version_with_previous_text(task: Task, version_id: int) -> tuple[DocumentVersion, str]:
    """A version of this task's document and the text of the version before it."""
    version = get_document_version(task, version_id)
    previous = (
        DocumentVersion.objects.filter(document_id=version.document_id, id__lt=version.pk)
        .order_by("-id")
        .values_list("text", flat=True)
        .first()
    )
    return version, previous or ""
