"""Turns and their record: each decided action (stored before it is applied, with an
idempotency key) and each model call."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.db import models

from agents.chains import hops
from agents.models.agents import Agent
from agents.models.profiles import Provider
from collab.tasks.models import Task


class TurnStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    WAITING = "waiting", "Waiting for a person"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


ACTIVE_STATUSES = (TurnStatus.QUEUED, TurnStatus.RUNNING)
FINAL_STATUSES = (TurnStatus.DONE, TurnStatus.FAILED, TurnStatus.CANCELLED)
# The "answered by" of a turn the built-in skills answered (agents/engine/producers/skills.py):
# no model wrote its text, whatever model the agent is set to.
SKILLS_LABEL = "the built-in skills (from the task's own words)"


class Trigger(models.TextChoices):
    MENTION = "mention", "Mentioned"
    MESSAGE = "message", "New message"
    ASK = "ask", "Ask button"
    ANSWER = "answer", "Question answered"
    IDLE = "idle", "Document idle"
    TIMEOUT = "timeout", "Question unanswered in time"
    AGENT = "agent", "Addressed by an agent"
    PLAN = "plan", "A step of the plan"


class HopKind(models.TextChoices):
    """The type of a hop of a chain (``agents.models.chains``): how one agent addressed another."""

    HANDOFF = hops.HANDOFF, "Hand-off"
    REVIEW = hops.REVIEW, "Review request"
    ANSWER = hops.ANSWER, "Answer"
    QUESTION = hops.QUESTION, "Question"
    ERROR = hops.ERROR, "Error"


class Turn(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="turns")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="agent_turns")
    trigger = models.CharField(max_length=20, choices=Trigger.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    status = models.CharField(max_length=20, choices=TurnStatus.choices, default=TurnStatus.QUEUED)
    inputs = models.JSONField(default=dict, help_text="Message ids and answers that started it.")
    # Chains (issue 30): the turn whose message addressed this one's agent, and their chain.
    parent = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="children"
    )
    chain = models.ForeignKey(
        "agents.Chain", on_delete=models.SET_NULL, null=True, blank=True, related_name="turns"
    )
    hop_kind = models.CharField(
        max_length=20,
        choices=HopKind.choices,
        blank=True,
        help_text="The type of the hop that started it (if any).",
    )
    context = models.JSONField(default=dict, help_text="What the model was shown.")
    policy_name = models.CharField(max_length=40, blank=True)
    policy_decision = models.JSONField(null=True, blank=True)
    decision = models.JSONField(
        null=True, blank=True, help_text="The validated structured output; set before acting."
    )
    stream_text = models.TextField(blank=True, help_text="Reply streamed so far (catch-up).")
    stages = models.JSONField(
        default=list,
        blank=True,
        help_text="Each stage a delivery ran: its duration and summary (agents/engine/trace.py).",
    )
    provider = models.CharField(max_length=20, blank=True)
    model = models.CharField(max_length=200, blank=True)
    model_label = models.CharField(max_length=240, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal(0))
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    first_token_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "task"],
                condition=models.Q(status="running"),
                name="one_running_turn_per_agent_and_task",
            ),
        ]
        indexes = [
            models.Index(fields=["task", "-created_at"]),
            models.Index(fields=["agent", "task", "status"]),
        ]

    def __str__(self) -> str:
        return f"Turn {self.pk} of {self.agent} on {self.task} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def is_embedded(self) -> bool:
        return self.provider == Provider.EMBEDDED

    @property
    def answered_by_skills(self) -> bool:
        return self.model_label == SKILLS_LABEL


class ActionKind(models.TextChoices):
    REPLY = "reply", "Reply in chat"
    ASK = "ask", "Ask a question"
    SUGGEST = "suggest", "Suggest a change"
    EDIT = "edit", "Edit the document"
    NOTE = "note", "Write a note"
    REMEMBER = "remember", "Remember something about a person"
    FINISH = "finish", "Finish"


class Action(models.Model):
    """One decided action of a turn, stored before it is applied."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        APPLIED = "applied", "Applied"
        SKIPPED = "skipped", "Skipped"

    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="actions")
    index = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=20, choices=ActionKind.choices)
    payload = models.JSONField(default=dict)
    idempotency_key = models.CharField(max_length=100, unique=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    result = models.JSONField(default=dict, blank=True)
    detail = models.CharField(max_length=300, blank=True)
    applied_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["turn", "index"]
        constraints = [
            models.UniqueConstraint(fields=["turn", "index"], name="one_action_per_turn_index"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} #{self.index} of turn {self.turn_id}"


class ModelCall(models.Model):
    """Every call to a chat model, fake and local ones included."""

    turn = models.ForeignKey(
        Turn, on_delete=models.CASCADE, null=True, blank=True, related_name="model_calls"
    )
    agent = models.ForeignKey(
        Agent, on_delete=models.SET_NULL, null=True, blank=True, related_name="model_calls"
    )
    provider = models.CharField(max_length=20)
    model = models.CharField(max_length=200, blank=True)
    purpose = models.CharField(max_length=40, default="decide")
    messages = models.JSONField(default=list)
    response = models.TextField(blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=Decimal(0))
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.provider}:{self.model} for turn {self.turn_id}"
