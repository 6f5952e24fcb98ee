from __future__ import annotations

from django.conf import settings
from django.db import models


class ApiToken(models.Model):
    """A personal API token. Only a SHA-256 hash is stored; the token is shown once."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=16, help_text="First characters, to tell tokens apart.")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Preferences(models.Model):
    """A person's own settings that are not part of Django's user: the time zone times are
    shown in (blank: the browser's own, for the times the page localises, and UTC elsewhere)."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preferences"
    )
    time_zone = models.CharField(max_length=64, blank=True)

    def __str__(self) -> str:
        return f"Preferences of {self.user_id}"
