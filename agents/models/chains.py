"""Chains (issue 30): agents addressing agents by @name in a task's chat. A chain starts at the
first hop of a turn a person started; each hop is one agent's message addressing another
agent, which takes a turn with that message as its trigger. The guards
(``agents.chains.guards``) count the hops of the chain's window: those whose message came
after a person's last message in the task (so only a person's message resets the budget)."""

from __future__ import annotations

from django.db import models

from agents.models.agents import Agent
from agents.models.turns import HopKind, Turn
from collab.tasks.models import Message, Task


class Chain(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "Going on"
        TRIPPED = "tripped", "Stopped by a guard"
        STOPPED = "stopped", "Stopped by a person"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="agent_chains")
    root_turn = models.ForeignKey(
        Turn, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    budget = models.PositiveSmallIntegerField(help_text="Hops per window (since a person wrote).")
    hop_count = models.PositiveIntegerField(default=0, help_text="Hops started, all windows.")
    guard = models.CharField(max_length=40, blank=True, help_text="The guard that stopped it.")
    reason = models.CharField(max_length=300, blank=True)
    notice = models.ForeignKey(
        Message,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The chat message saying the guard stopped it; a person writing after it "
        "resets the chain.",
    )
    held = models.JSONField(
        default=list,
        blank=True,
        help_text="Hops waiting: for an answer to a question of the chain, or for a person's "
        "“continue” after a guard stopped it.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-id"]
        indexes = [models.Index(fields=["task", "status"])]

    def __str__(self) -> str:
        return f"Chain {self.pk} on {self.task_id} ({self.status}, {self.hop_count} hops)"


class Hop(models.Model):
    """One agent's message addressing another agent (or a failure reported back to the agent
    that handed the work over), in the order the chain went."""

    chain = models.ForeignKey(Chain, on_delete=models.CASCADE, related_name="hops")
    index = models.PositiveIntegerField()
    kind = models.CharField(max_length=20, choices=HopKind.choices)
    from_turn = models.ForeignKey(
        Turn, on_delete=models.SET_NULL, null=True, blank=True, related_name="hops_out"
    )
    from_agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    to_agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="+")
    to_turn = models.ForeignKey(
        Turn, on_delete=models.SET_NULL, null=True, blank=True, related_name="hops_in"
    )
    message = models.ForeignKey(
        Message, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    text = models.CharField(max_length=2000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["chain", "index"]
        constraints = [
            models.UniqueConstraint(fields=["chain", "index"], name="one_hop_per_chain_index"),
            models.UniqueConstraint(
                fields=["message", "to_agent"],
                condition=models.Q(message__isnull=False),
                name="one_hop_per_message_and_agent",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} hop {self.index} of chain {self.chain_id}"
