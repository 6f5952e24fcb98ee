"""Outside agents (issue 29): agents whose work is produced by a program outside Collab.

An outside agent is an ``Agent`` with an ``OutsideAgent`` row: where its turns are sent (a
webhook URL; blank: the program pulls them) and the hash of its token. ``OutsideSecret`` holds
its signing secrets (several may be active at once, so one can be rotated without downtime).
``Delivery`` is the one notification of a turn (its ``webhook_id`` is the idempotency key the
program sees on every retry); ``Activity`` is one typed thing the program posted to its turn,
kept whether it was accepted or refused.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.db import models

from agents.models.agents import Agent
from agents.models.turns import Turn


class OutsideAgent(models.Model):
    agent = models.OneToOneField(
        Agent, on_delete=models.CASCADE, primary_key=True, related_name="outside"
    )
    webhook_url = models.URLField(
        max_length=500, blank=True, help_text="Blank: the program pulls its turns instead."
    )
    a2a_card_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="An Agent2Agent agent's card: its turns are sent as A2A messages instead.",
    )
    token_prefix = models.CharField(max_length=16)
    token_hash = models.CharField(max_length=64, unique=True)

    def __str__(self) -> str:
        return f"Outside agent {self.agent_id}"

    def turn_fields(self) -> dict[str, str]:
        """Who answers this agent's turns, as a turn's ``provider``, ``model`` and
        ``model_label``: the A2A agent's or the program's host (``pull`` for a program that
        pulls), never the model profile, which an outside agent does not use."""
        if self.a2a_card_url:
            provider, where = "a2a", urlsplit(self.a2a_card_url).hostname or "a2a"
            label = f"A2A agent ({where})"
        else:
            provider = "outside"
            where = (
                (urlsplit(self.webhook_url).hostname or "webhook") if self.webhook_url else "pull"
            )
            label = f"Outside agent ({where})"
        return {"provider": provider, "model": where[:200], "model_label": label[:240]}


class OutsideSecret(models.Model):
    """A signing secret (``whsec_<base64>``). HMAC is symmetric: Collab must keep the secret
    itself to sign; it is shown once, when made, and only its last characters after that."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="outside_secrets")
    secret = models.CharField(max_length=100)
    hint = models.CharField(max_length=12, help_text="The secret's last characters.")
    created_at = models.DateTimeField(auto_now_add=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"…{self.hint}"


class Delivery(models.Model):
    """A turn sent to its outside agent: by webhook (tried with backoff) or taken by a pull."""

    class Status(models.TextChoices):
        PENDING = "pending", "Not yet acknowledged"
        DELIVERED = "delivered", "Acknowledged"
        FAILED = "failed", "Never acknowledged"

    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, related_name="delivery")
    webhook_id = models.CharField(max_length=64, unique=True)
    payload = models.JSONField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    stop_sent_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="When the program learned that a person stopped the turn (its stop webhook "
        "was acknowledged, or a pull took the notice).",
    )

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"{self.webhook_id} ({self.status})"

    @property
    def stop_id(self) -> str:
        """The stop notice's ``webhook-id`` (the same on every try)."""
        return f"{self.webhook_id}_stop"


class ActivityKind(models.TextChoices):
    REPLY = "reply", "Reply"
    REPLY_CHUNK = "reply_chunk", "Streamed reply chunk"
    QUESTION = "question", "Question"
    SUGGESTION = "suggestion", "Suggestion"
    EDIT = "edit", "Direct edit"
    NOTE = "note", "Note"
    FINISH = "finish", "Finish"
    ERROR = "error", "Error"


class Activity(models.Model):
    """One activity an outside program posted to a turn. ``activity_id`` is its
    ``webhook-id`` header: an accepted id is never accepted again."""

    class Status(models.TextChoices):
        ACCEPTED = "accepted", "Accepted"
        REFUSED = "refused", "Refused"

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="outside_activities")
    turn = models.ForeignKey(Turn, on_delete=models.CASCADE, related_name="outside_activities")
    activity_id = models.CharField(max_length=100)
    kind = models.CharField(max_length=20, choices=ActivityKind.choices, blank=True)
    payload = models.JSONField(default=dict)
    status = models.CharField(max_length=20, choices=Status.choices)
    reason = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["agent", "activity_id"],
                condition=models.Q(status="accepted"),
                name="outside_activity_accepted_once",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.activity_id} ({self.status})"


class RemoteTask(models.Model):
    """The A2A task a turn of an A2A agent sent its message to (docs/adr/0025). Kept before the
    message is sent: a turn taken over after its worker died follows the same task rather
    than sending the message twice, and a person's answer to its question continues it."""

    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, related_name="remote_task")
    message_id = models.CharField(max_length=64, unique=True)
    task_id = models.CharField(max_length=200, blank=True)
    context_id = models.CharField(max_length=200, blank=True)
    state = models.CharField(max_length=40, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]

    def __str__(self) -> str:
        return f"A2A task {self.task_id or '(not yet known)'} ({self.state})"


def outside_of(agent: Agent) -> OutsideAgent | None:
    """The agent's outside-program row (joined already when the query selected it), or None."""
    try:
        found: OutsideAgent = agent.outside
    except OutsideAgent.DoesNotExist:
        return None
    return found
