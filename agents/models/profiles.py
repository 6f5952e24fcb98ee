"""Model profiles: which provider and model an agent thinks with, and at what price."""

from __future__ import annotations

from decimal import Decimal

from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models

ENV_NAME_RE = r"^[A-Z_][A-Z0-9_]{0,99}$"


class Provider(models.TextChoices):
    EMBEDDED = "embedded", "Embedded local model"
    OPENAI = "openai", "OpenAI-compatible endpoint"
    ANTHROPIC = "anthropic", "Anthropic"
    FAKE = "fake", "Fake model (tests and benchmarks)"


class ModelProfile(models.Model):
    """How to reach a chat model. Configured by admins; the API key stays in the environment."""

    name = models.CharField(max_length=80, unique=True)
    provider = models.CharField(max_length=20, choices=Provider.choices)
    model = models.CharField(
        max_length=200,
        blank=True,
        help_text="Model name at the provider; for the fake provider, a behaviour (see llm.py).",
    )
    base_url = models.URLField(blank=True, help_text="For OpenAI-compatible servers.")
    api_key_env = models.CharField(
        max_length=100,
        blank=True,
        validators=[RegexValidator(ENV_NAME_RE, "Use the NAME of an environment variable.")],
        help_text="Name of the environment variable that holds the key (never the key).",
    )
    temperature = models.FloatField(
        default=0.2, validators=[MinValueValidator(0.0), MaxValueValidator(2.0)]
    )
    max_tokens = models.PositiveIntegerField(
        default=512, validators=[MinValueValidator(16), MaxValueValidator(32_000)]
    )
    timeout_seconds = models.PositiveIntegerField(
        default=60, validators=[MinValueValidator(1), MaxValueValidator(600)]
    )
    price_in_per_1k = models.DecimalField(
        max_digits=12, decimal_places=6, default=Decimal(0), help_text="Price per 1k input tokens."
    )
    price_out_per_1k = models.DecimalField(
        max_digits=12, decimal_places=6, default=Decimal(0), help_text="Price per 1k output tokens."
    )
    is_default = models.BooleanField(
        default=False,
        help_text="The site's default model: agents without a model of their own use it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["is_default"],
                condition=models.Q(is_default=True),
                name="one_default_model_profile",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def is_embedded(self) -> bool:
        return self.provider == Provider.EMBEDDED

    @property
    def label(self) -> str:
        """What the UI shows as 'answered by'."""
        if self.is_embedded:
            return f"{self.model or 'embedded model'} (small embedded model)"
        if self.provider == Provider.FAKE:
            return f"{self.name} (test model)"
        return self.model or self.name

    def cost(self, tokens_in: int, tokens_out: int) -> Decimal:
        total = self.price_in_per_1k * tokens_in + self.price_out_per_1k * tokens_out
        return (total / 1000).quantize(Decimal("0.000001"))
