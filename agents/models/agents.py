"""Agents: the AI members of a workspace."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import MaxValueValidator, RegexValidator
from django.db import models
from django.db.models.functions import Lower

from agents.models.profiles import ModelProfile
from agents.policies.registry import DEFAULT_POLICY
from collab.tasks.models import Task
from collab.workspaces.models import Workspace

AGENT_NAME_RE = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"


class AgentMode(models.TextChoices):
    SUGGEST_ONLY = "suggest_only", "Suggest only"
    MAY_EDIT = "may_edit", "May edit directly"


# The fields a workspace owner sets on an agent: the service (``agents.services.agents``)
# accepts these and no others, and the agent form (``agents/forms.py``) shows these.
AGENT_FIELDS = (
    "name",
    "colour",
    "instructions",
    "model_profile",
    "policy_name",
    "mode",
    "on_mention",
    "on_every_message",
    "on_idle_document",
    "ask_button",
    "question_timeout_minutes",
    "is_active",
    "learn_per_person",
    "joins_new_tasks",
)


class Agent(models.Model):
    """An AI member of a workspace; it works on the tasks it is added to."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="agents")
    name = models.CharField(
        max_length=32,
        validators=[
            RegexValidator(AGENT_NAME_RE, "Letters, digits, - and _; start with a letter.")
        ],
        help_text="Used for @mentions.",
    )
    colour = models.CharField(
        max_length=7,
        default="#6b5bd6",
        validators=[RegexValidator(r"^#[0-9a-fA-F]{6}$", "A colour like #6b5bd6.")],
    )
    instructions = models.TextField(max_length=4000, blank=True)
    model_profile = models.ForeignKey(
        ModelProfile,
        on_delete=models.PROTECT,
        null=True,
        blank=True,
        related_name="agents",
        help_text="Empty: the embedded local model.",
    )
    policy_name = models.CharField(max_length=40, default=DEFAULT_POLICY)
    mode = models.CharField(
        max_length=20, choices=AgentMode.choices, default=AgentMode.SUGGEST_ONLY
    )
    on_mention = models.BooleanField(default=True)
    on_every_message = models.BooleanField(default=False)
    on_idle_document = models.BooleanField(default=False)
    ask_button = models.BooleanField(default=True)
    question_timeout_minutes = models.PositiveIntegerField(
        default=10,
        validators=[MaxValueValidator(7 * 24 * 60)],
        help_text=(
            "When nobody answers the agent's question within this many minutes, it goes ahead "
            "on its best guess and says what it assumed (undoable). 0: wait for an answer."
        ),
    )
    is_active = models.BooleanField(default=True)
    joins_new_tasks = models.BooleanField(
        default=False, help_text="Put on every new task of the workspace (the default agent is)."
    )
    learn_per_person = models.BooleanField(
        default=False,
        help_text=(
            "Learning policies (bandit) keep one state per person who asks, instead of one for "
            "the whole workspace."
        ),
    )
    tasks = models.ManyToManyField(Task, blank=True, related_name="agents")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            models.UniqueConstraint(
                "workspace", Lower("name"), name="agent_name_unique_in_workspace"
            ),
        ]

    def __str__(self) -> str:
        return self.name
