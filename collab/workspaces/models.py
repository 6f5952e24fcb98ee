from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class Role(models.TextChoices):
    OWNER = "owner", "Owner"
    EDITOR = "editor", "Editor"
    VIEWER = "viewer", "Viewer"


INSTRUCTIONS_MAX_CHARS = 4000


class Workspace(models.Model):
    name = models.CharField(max_length=120)
    instructions = models.TextField(
        max_length=INSTRUCTIONS_MAX_CHARS,
        blank=True,
        help_text="Told to every agent of the workspace in every turn (trusted configuration).",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    members = models.ManyToManyField(  # type: ignore[var-annotated]
        settings.AUTH_USER_MODEL, through="Membership", related_name="workspaces"
    )

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=10, choices=Role.choices)
    joined_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["joined_at", "id"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="one_membership_per_user"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    @property
    def can_edit(self) -> bool:
        return self.role in (Role.OWNER, Role.EDITOR)

    @property
    def is_owner(self) -> bool:
        return self.role == Role.OWNER


class Invitation(models.Model):
    """An invitation link. The token is shown once; only its hash is stored."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="invitations")
    role = models.CharField(
        max_length=10, choices=[(Role.EDITOR, "Editor"), (Role.VIEWER, "Viewer")]
    )
    token_hash = models.CharField(max_length=64, unique=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    max_uses = models.PositiveIntegerField(default=1)
    uses = models.PositiveIntegerField(default=0)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(uses__lte=models.F("max_uses")), name="uses_within_cap"
            ),
            models.CheckConstraint(condition=models.Q(max_uses__gte=1), name="max_uses_positive"),
        ]

    def __str__(self) -> str:
        return f"Invitation to {self.workspace} as {self.role}"

    @property
    def is_usable(self) -> bool:
        return (
            self.revoked_at is None
            and self.uses < self.max_uses
            and self.expires_at > timezone.now()
        )

    @property
    def state(self) -> str:
        if self.revoked_at is not None:
            return "revoked"
        if self.uses >= self.max_uses:
            return "used up"
        if self.expires_at <= timezone.now():
            return "expired"
        return "active"
