from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


class Mode(models.TextChoices):
    DETECTORS = "detectors", "Detectors (the product's own reading, no model)"
    REAL = "real", "Real signals (the configured model)"
    ORACLE = "oracle", "Oracle (a perfect reader: an upper bound)"


class MemoryChoice(models.TextChoices):
    BOTH = "both", "With and without memory"
    ON = "on", "With memory"
    OFF = "off", "Without memory"


class EvaluationRun(models.Model):
    """One run of the evaluation harness started by staff; its report is stored for comparison."""

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    scenarios = models.CharField(max_length=100, default="default")
    policies = models.JSONField(default=list)
    mode = models.CharField(max_length=10, choices=Mode.choices, default=Mode.DETECTORS)
    memory = models.CharField(
        max_length=10, choices=MemoryChoice.choices, default=MemoryChoice.BOTH
    )
    model_profile = models.CharField(max_length=80, blank=True)
    seeds = models.PositiveSmallIntegerField(
        default=1, validators=[MinValueValidator(1), MaxValueValidator(10)]
    )
    sessions = models.PositiveSmallIntegerField(
        null=True, blank=True, validators=[MinValueValidator(1), MaxValueValidator(50)]
    )
    note = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=10, choices=RunStatus.choices, default=RunStatus.QUEUED)
    episodes_total = models.PositiveIntegerField(default=0)
    episodes_done = models.PositiveIntegerField(default=0)
    report = models.JSONField(null=True, blank=True, help_text="Config and metrics per policy.")
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Evaluation run {self.pk} ({self.status})"

    @property
    def label(self) -> str:
        return f"#{self.pk} {self.scenarios} · {self.mode}" + (
            f" · {self.note}" if self.note else ""
        )


class OracleTask(models.Model):
    """A task created by an evaluation run in the app engine's oracle mode: the turn engine's
    policy gets its model signals from this episode's ground truth (see signals.py)."""

    task = models.OneToOneField("tasks.Task", on_delete=models.CASCADE, related_name="+")
    episode = models.JSONField(help_text="The scenario episode (ground truth).")
    today = models.DateField()

    def __str__(self) -> str:
        return f"Oracle for task {self.task_id}"
