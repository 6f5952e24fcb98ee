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


class Document(models.Model):
    """The task's shared markdown document.

    ``text`` is the derived plain text that pages, search, exports and prompts read; the live
    co-editing state (Yjs updates and snapshots) is kept beside it.
    """

    task = models.OneToOneField(Task, on_delete=models.CASCADE, related_name="document")
    text = models.TextField(blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Document of {self.task}"


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
