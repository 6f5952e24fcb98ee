"""People's feedback on agent work, and the learning policies' persisted state."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from agents.models.turns import Action, Turn
from agents.models.work import Question, Suggestion
from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace

FEEDBACK_COMMENT_MAX = 1000


# Which foreign key each kind of feedback target uses (exactly one is set).
FEEDBACK_TARGETS: dict[str, str] = {
    "message": "message",
    "question": "question",
    "suggestion": "suggestion",
    "edit": "action",
}


def _exactly_one_feedback_target() -> models.Q:
    condition = models.Q()
    for kind, field in FEEDBACK_TARGETS.items():
        nulls = {f"{other}__isnull": other != field for other in FEEDBACK_TARGETS.values()}
        condition |= models.Q(target_kind=kind, **nulls)
    return condition


class Feedback(models.Model):
    """One person's feedback on one piece of agent work: an agent chat message, a question
    card, a suggestion card or a direct edit. One row per (person, target); giving feedback
    again changes the row, and clicking the same thumb again clears the rating (the row stays,
    so that the bandit never learns twice from the same person on the same target)."""

    class TargetKind(models.TextChoices):
        MESSAGE = "message", "Chat message"
        QUESTION = "question", "Question"
        SUGGESTION = "suggestion", "Suggestion"
        EDIT = "edit", "Edit"

    class Rating(models.TextChoices):
        UP = "up", "Thumbs up"
        DOWN = "down", "Thumbs down"

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="agent_feedback"
    )
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="agent_feedback")
    turn = models.ForeignKey(
        Turn, on_delete=models.SET_NULL, null=True, blank=True, related_name="feedback"
    )
    target_kind = models.CharField(max_length=20, choices=TargetKind.choices)
    message = models.ForeignKey(
        Message, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    question = models.ForeignKey(
        Question, on_delete=models.CASCADE, null=True, blank=True, related_name="feedback"
    )
    suggestion = models.ForeignKey(
        Suggestion, on_delete=models.CASCADE, null=True, blank=True, related_name="feedback"
    )
    action = models.ForeignKey(
        Action,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="feedback",
        help_text="The edit action, for feedback on a direct edit.",
    )
    rating = models.CharField(
        max_length=4, choices=Rating.choices, blank=True, help_text="Empty: no rating."
    )
    comment = models.CharField(max_length=FEEDBACK_COMMENT_MAX, blank=True)
    unnecessary_question = models.BooleanField(default=False)
    learned_reward = models.FloatField(
        null=True,
        blank=True,
        help_text="The reward the policy learned from this row (at most once per row).",
    )
    learned_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=_exactly_one_feedback_target(),
                name="feedback_exactly_one_target",
            ),
            models.CheckConstraint(
                condition=models.Q(unnecessary_question=False) | models.Q(target_kind="question"),
                name="feedback_unnecessary_only_on_questions",
            ),
            models.CheckConstraint(
                condition=models.Q(rating__in=["", "up", "down"]),
                name="feedback_rating_up_or_down",
            ),
            models.UniqueConstraint(fields=["user", "message"], name="feedback_once_per_message"),
            models.UniqueConstraint(fields=["user", "question"], name="feedback_once_per_question"),
            models.UniqueConstraint(
                fields=["user", "suggestion"], name="feedback_once_per_suggestion"
            ),
            models.UniqueConstraint(fields=["user", "action"], name="feedback_once_per_edit"),
        ]
        indexes = [
            models.Index(fields=["task", "-updated_at"]),
            models.Index(fields=["workspace", "-updated_at"]),
        ]

    def __str__(self) -> str:
        return f"Feedback by {self.user_id} on {self.target_kind} ({self.rating or '-'})"

    @property
    def target_id(self) -> int | None:
        return self.message_id or self.question_id or self.suggestion_id or self.action_id

    @property
    def is_empty(self) -> bool:
        return not self.rating and not self.unnecessary_question and not self.comment


class PolicyState(models.Model):
    """A learning policy's JSON state, one per workspace (``user`` empty) or per person."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    policy_name = models.CharField(max_length=40)
    state = models.JSONField(default=dict)
    decisions = models.PositiveIntegerField(default=0)
    rewards = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["workspace", "policy_name", "user"]
        constraints = [
            models.UniqueConstraint(
                fields=["workspace", "policy_name"],
                condition=models.Q(user__isnull=True),
                name="one_workspace_policy_state",
            ),
            models.UniqueConstraint(
                fields=["workspace", "user", "policy_name"],
                condition=models.Q(user__isnull=False),
                name="one_personal_policy_state",
            ),
        ]

    def __str__(self) -> str:
        who = f"user {self.user_id}" if self.user_id else "workspace"
        return f"{self.policy_name} state of workspace {self.workspace_id} ({who})"
