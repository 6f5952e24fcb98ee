"""What agents leave for people on a task: suggestions, questions, assumptions, notes."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from agents.models.agents import Agent
from agents.models.turns import Turn
from collab.tasks.models import Task


class Suggestion(models.Model):
    """A proposed document change that a person accepts (maybe after editing) or rejects."""

    class Status(models.TextChoices):
        PROPOSED = "proposed", "Proposed"
        ACCEPTED = "accepted", "Accepted"
        EDITED = "edited", "Edited, then accepted"
        REJECTED = "rejected", "Rejected"
        STALE = "stale", "No longer applies"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="suggestions")
    # An agent's (from a turn), or a person's (``proposed_by``: e.g. their MCP client).
    agent = models.ForeignKey(
        Agent, on_delete=models.CASCADE, null=True, blank=True, related_name="suggestions"
    )
    proposed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    turn = models.ForeignKey(
        Turn, on_delete=models.SET_NULL, null=True, blank=True, related_name="suggestions"
    )
    find = models.TextField(blank=True, help_text="Text to replace; empty appends.")
    replace = models.TextField(blank=True)
    rationale = models.TextField(blank=True)
    diff = models.TextField(blank=True)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PROPOSED)
    final_text = models.TextField(blank=True, help_text="What was applied, after any edit.")
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Suggestion {self.pk} by {self.proposer_name} ({self.status})"

    @property
    def proposer_name(self) -> str:
        """The agent's name, or the person's username (a person's suggestion has no agent)."""
        agent = self.agent if self.agent_id is not None else None
        if agent is not None:
            return str(agent.name)
        return self.proposed_by.get_username() if self.proposed_by else "someone"

    @property
    def proposer_colour(self) -> str:
        agent = self.agent if self.agent_id is not None else None
        return str(agent.colour) if agent is not None else "inherit"


class Question(models.Model):
    """A clarifying question card; answering it resumes the agent."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        ANSWERED = "answered", "Answered"
        WITHDRAWN = "withdrawn", "Withdrawn"
        EXPIRED = "expired", "No answer in time"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="agent_questions")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="questions")
    turn = models.ForeignKey(
        Turn, on_delete=models.SET_NULL, null=True, blank=True, related_name="questions"
    )
    text = models.TextField(max_length=1000)
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    answer = models.TextField(blank=True)
    answered_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    answered_at = models.DateTimeField(null=True, blank=True)
    expired_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Question {self.pk} by {self.agent}: {self.text[:40]}"

    @property
    def can_be_answered(self) -> bool:
        """Open, or expired (a late answer still reaches the agent)."""
        return self.status in (self.Status.OPEN, self.Status.EXPIRED)


class Assumption(models.Model):
    """Nobody answered an agent's question in time, so it went ahead on its best guess: the
    visible "I assumed X" message, and how to undo what that turn did to the document."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        UNDONE = "undone", "Undone"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="agent_assumptions")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="assumptions")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="assumptions")
    turn = models.OneToOneField(Turn, on_delete=models.CASCADE, related_name="assumption")
    message = models.OneToOneField(
        "tasks.Message",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="agent_assumption",
    )
    version_before = models.ForeignKey(
        "tasks.DocumentVersion",
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
        help_text="The document as it was before the turn; Undo restores it.",
    )
    text = models.TextField(blank=True)
    minutes = models.PositiveIntegerField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.ACTIVE)
    undone_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    undone_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Assumption by {self.agent} on question {self.question_id} ({self.status})"


class AgentNote(models.Model):
    """An agent's own notes on a task, visible to the task's people."""

    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="notes")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="agent_notes")
    turn = models.ForeignKey(
        Turn, on_delete=models.SET_NULL, null=True, blank=True, related_name="notes"
    )
    text = models.TextField(max_length=2000)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"Note by {self.agent}: {self.text[:40]}"
