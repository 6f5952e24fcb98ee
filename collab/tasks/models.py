from __future__ import annotations

from django.conf import settings
from django.db import models

from collab.workspaces.models import Workspace


class TaskStatus(models.TextChoices):
    OPEN = "open", "Open"
    IN_PROGRESS = "in_progress", "In progress"
    NEEDS_INPUT = "needs_input", "Needs input"
    DONE = "done", "Done"


class Task(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="tasks")
    title = models.CharField(max_length=200)
    goal = models.TextField(max_length=10_000, blank=True)
    status = models.CharField(max_length=20, choices=TaskStatus.choices, default=TaskStatus.OPEN)
    template = models.CharField(
        max_length=40,
        blank=True,
        help_text="The task template it started from (agents/task_templates); empty: free-form.",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        indexes = [models.Index(fields=["workspace", "status", "-updated_at"])]

    def __str__(self) -> str:
        return self.title


class TaskStatusChange(models.Model):
    """One change of a task's status: who, from what, to what, when (review: time to done,
    replay). Written by ``set_task_status`` only."""

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="status_changes")
    from_status = models.CharField(max_length=20, choices=TaskStatus.choices)
    to_status = models.CharField(max_length=20, choices=TaskStatus.choices)
    changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["changed_at", "id"]
        indexes = [models.Index(fields=["task", "to_status", "-changed_at"])]

    def __str__(self) -> str:
        return f"{self.task_id}: {self.from_status} → {self.to_status}"


class Document(models.Model):
    """The task's shared markdown document.

    The Yjs document (a Y.Text named ``content``) is stored as a snapshot (``ystate``, the
    merged state of every update up to ``snapshot_update_id``) plus the ``DocumentUpdate`` rows
    written after it. ``text`` is the derived plain text that pages, search, exports and prompts
    read; it is rewritten whenever a batch of updates is persisted. See docs/protocol.md.
    """

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="document")
    text = models.TextField(blank=True)
    ystate = models.BinaryField(blank=True, default=b"", help_text="Yjs snapshot (update v1).")
    snapshot_update_id = models.BigIntegerField(
        default=0, help_text="The snapshot holds every DocumentUpdate with an id up to this one."
    )
    snapshot_at = models.DateTimeField(null=True, blank=True)
    log_length = models.PositiveIntegerField(
        default=0, help_text="How many DocumentUpdate rows follow the snapshot."
    )
    versioned_at = models.DateTimeField(null=True, blank=True, help_text="Latest version.")
    pending_authors = models.JSONField(
        default=list, blank=True, help_text="Who changed the text since the latest version."
    )
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Document of {self.task}"


class DocumentUpdate(models.Model):
    """One persisted Yjs update (v1 encoding), in the order it was committed.

    Updates of one author that arrive within one flush are merged into one row. Compaction folds
    old rows into ``Document.ystate`` and empties their ``data``; the rows stay as the record of
    who changed the document and when.
    """

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="updates")
    data = models.BinaryField(help_text="Empty once compaction folded it into the snapshot.")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    author_label = models.CharField(max_length=200, help_text="Person or agent (and turn).")
    origin = models.CharField(max_length=20, help_text="websocket, service, restore or seed.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["document", "id"])]

    def __str__(self) -> str:
        return f"update {self.pk} of document {self.document_id} by {self.author_label}"


class DocumentVersion(models.Model):
    """A checkpoint of the document's text, with who changed it since the previous one.

    Written at most once per ``DOCUMENT_VERSION_INTERVAL`` while people type, before any large
    deletion, after every server-side edit (agents, restores) and when a room goes idle.
    """

    class Kind(models.TextChoices):
        EDITS = "edits", "Edits"
        BEFORE_DELETION = "before_deletion", "Before a large deletion"
        SERVICE = "service", "Server-side edit"
        RESTORE = "restore", "Restore"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="versions")
    text = models.TextField(blank=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.EDITS)
    authors = models.JSONField(default=list, help_text="Labels of who changed the text.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["document", "-id"])]

    def __str__(self) -> str:
        return f"version {self.pk} of document {self.document_id}"


class Message(models.Model):
    """A chat message on a task. ``author`` is empty for system and agent messages."""

    class Kind(models.TextChoices):
        HUMAN = "human", "Person"
        AGENT = "agent", "Agent"
        SYSTEM = "system", "System"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="messages")
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    kind = models.CharField(max_length=10, choices=Kind.choices, default=Kind.HUMAN)
    author_name = models.CharField(max_length=150, help_text="Display name at the time of posting.")
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["task", "-id"])]

    def __str__(self) -> str:
        return f"{self.author_name}: {self.body[:40]}"
