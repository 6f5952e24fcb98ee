"""Agents, their model profiles, and the full record of every turn they take.

A turn's life: queued → running → (waiting for a person) → done, failed or cancelled. Each
decided action is stored before it is applied and carries an idempotency key, so a job that is
delivered twice (a worker killed mid-turn) never applies an action twice.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator, RegexValidator
from django.db import models
from django.db.models.functions import Lower

from collab.tasks.models import Message, Task
from collab.workspaces.models import Workspace

AGENT_NAME_RE = r"^[A-Za-z][A-Za-z0-9_-]{0,31}$"
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
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_provider_display()})"

    @property
    def is_embedded(self) -> bool:
        return self.provider == Provider.EMBEDDED

    @property
    def label(self) -> str:
        """What the UI shows as 'answered by'."""
        if self.is_embedded:
            return f"{self.model or 'embedded model'} (embedded, small)"
        return self.model or self.name

    def cost(self, tokens_in: int, tokens_out: int) -> Decimal:
        total = self.price_in_per_1k * tokens_in + self.price_out_per_1k * tokens_out
        return (total / 1000).quantize(Decimal("0.000001"))


class AgentMode(models.TextChoices):
    SUGGEST_ONLY = "suggest_only", "Suggest only"
    MAY_EDIT = "may_edit", "May edit directly"


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
    policy_name = models.CharField(max_length=40, default="never")
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


class TurnStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    WAITING = "waiting", "Waiting for a person"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


ACTIVE_STATUSES = (TurnStatus.QUEUED, TurnStatus.RUNNING)
FINAL_STATUSES = (TurnStatus.DONE, TurnStatus.FAILED, TurnStatus.CANCELLED)


class Trigger(models.TextChoices):
    MENTION = "mention", "Mentioned"
    MESSAGE = "message", "New message"
    ASK = "ask", "Ask button"
    ANSWER = "answer", "Question answered"
    IDLE = "idle", "Document idle"
    TIMEOUT = "timeout", "Question unanswered in time"


class Turn(models.Model):
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="turns")
    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="agent_turns")
    trigger = models.CharField(max_length=20, choices=Trigger.choices)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    status = models.CharField(max_length=20, choices=TurnStatus.choices, default=TurnStatus.QUEUED)
    inputs = models.JSONField(default=dict, help_text="Message ids and answers that started it.")
    context = models.JSONField(default=dict, help_text="What the model was shown.")
    policy_name = models.CharField(max_length=40, blank=True)
    policy_decision = models.JSONField(null=True, blank=True)
    decision = models.JSONField(
        null=True, blank=True, help_text="The validated structured output; set before acting."
    )
    stream_text = models.TextField(blank=True, help_text="Reply streamed so far (catch-up).")
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


class Suggestion(models.Model):
    """A proposed document change that a person accepts (maybe after editing) or rejects."""

    class Status(models.TextChoices):
        PROPOSED = "proposed", "Proposed"
        ACCEPTED = "accepted", "Accepted"
        EDITED = "edited", "Edited, then accepted"
        REJECTED = "rejected", "Rejected"
        STALE = "stale", "No longer applies"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="suggestions")
    agent = models.ForeignKey(Agent, on_delete=models.CASCADE, related_name="suggestions")
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
        return f"Suggestion {self.pk} by {self.agent} ({self.status})"


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
