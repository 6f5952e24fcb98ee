"""Per-workspace review settings: the monthly model budget and what exports may contain."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from collab.workspaces.models import Workspace


class ReviewSettings(models.Model):
    """A missing row means the defaults: no budget, personal memory never exported."""

    workspace = models.OneToOneField(
        Workspace, on_delete=models.CASCADE, primary_key=True, related_name="review_settings"
    )
    monthly_budget = models.DecimalField(
        max_digits=12,
        decimal_places=2,
        null=True,
        blank=True,
        validators=[MinValueValidator(Decimal(0))],
        help_text="Model spend allowed per calendar month (UTC), in the prices' currency. "
        "Empty: no limit.",
    )
    warn_at_percent = models.PositiveSmallIntegerField(
        default=80,
        validators=[MinValueValidator(1), MaxValueValidator(100)],
        help_text="Warn owners when this share of the budget is spent.",
    )
    hard_stop = models.BooleanField(
        default=True, help_text="Agents stop taking turns once the budget is spent."
    )
    export_personal_memory = models.BooleanField(
        default=False,
        help_text="Exports may include personal memory changes of people who allowed admins "
        "to read their memory. Team memory is always included.",
    )
    updated_at = models.DateTimeField(auto_now=True)
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        verbose_name_plural = "review settings"

    def __str__(self) -> str:
        return f"Review settings of workspace {self.workspace_id}"
