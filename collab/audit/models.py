from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models


class AuditEvent(models.Model):
    """Who did what, when and from where. Append-only: rows are never changed or deleted
    through the app (the model refuses both)."""

    class Action(models.TextChoices):
        WORKSPACE_CREATED = "workspace.created"
        MEMBER_JOINED = "member.joined"
        MEMBER_ROLE_CHANGED = "member.role_changed"
        MEMBER_REMOVED = "member.removed"
        MEMBER_LEFT = "member.left"
        INVITATION_CREATED = "invitation.created"
        INVITATION_REVOKED = "invitation.revoked"
        API_TOKEN_CREATED = "api_token.created"  # noqa: S105
        API_TOKEN_REVOKED = "api_token.revoked"  # noqa: S105
        MEMORY_ADMIN_ACCESS = "memory.admin_access"
        MEMORY_FORGOTTEN = "memory.forgotten"
        SETTINGS_CHANGED = "settings.changed"
        EXPORT = "export"

    created_at = models.DateTimeField(auto_now_add=True, db_index=True)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    actor_label = models.CharField(max_length=150, help_text="Username at the time of the event.")
    action = models.CharField(max_length=40, choices=Action.choices, db_index=True)
    workspace = models.ForeignKey(
        "workspaces.Workspace",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="audit_events",
    )
    target = models.CharField(max_length=200, blank=True, help_text="What was acted on.")
    data = models.JSONField(default=dict, blank=True)
    ip = models.GenericIPAddressField(null=True, blank=True)
    user_agent = models.CharField(max_length=300, blank=True)
    via = models.CharField(max_length=20, default="web", help_text="web, api, cli or worker.")

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["workspace", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_label} {self.action} {self.target}"

    def save(self, *args: Any, **kwargs: Any) -> None:
        if self.pk is not None:
            raise ValueError("Audit events are append-only.")
        super().save(*args, **kwargs)

    def delete(self, *args: Any, **kwargs: Any) -> tuple[int, dict[str, int]]:
        raise ValueError("Audit events are append-only.")
