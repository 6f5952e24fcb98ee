"""What agents remember about people, with its history and each person's settings.

Provenance (task, turn, message, person) is stored as plain integers so that this app does not
depend on the agents app's migrations; a remembered item outlives the turn that produced it.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from django.utils import timezone

from collab.workspaces.models import Workspace

TEXT_MAX_CHARS = 500
KEY_MAX_CHARS = 40
VALUE_MAX_CHARS = 120
KINDS_MAX_CHARS = 200


class Scope(models.TextChoices):
    PERSONAL = "personal", "Personal (everywhere)"
    WORKSPACE = "workspace", "Personal (in one workspace)"
    TEAM = "team", "Team (shared by the workspace)"


class Kind(models.TextChoices):
    PREFERENCE = "preference", "Preference"
    FACT = "fact", "Fact"
    INSTRUCTION = "instruction", "Instruction"


class Status(models.TextChoices):
    ACTIVE = "active", "Active"
    SUPERSEDED = "superseded", "Superseded"
    DELETED = "deleted", "Deleted"


class Source(models.TextChoices):
    CHAT_COMMAND = "chat_command", "Said in chat (remember / forget)"
    REFLECTION = "reflection", "Noticed after a conversation"
    AGENT = "agent", "Proposed by an agent"
    MANUAL = "manual", "Written on the memory page"
    IMPORT = "import", "Imported from a file"


class ReviewMode(models.TextChoices):
    AUTO = "auto", "Accept what agents notice automatically"
    REVIEW = "review", "Let me review what agents notice first"


#: Items that make up a person's structured profile (always given to turns, within a budget).
PROFILE = models.Q(status="active") & (models.Q(key__gt="") | models.Q(pinned=True))


class MemoryItem(models.Model):
    """One remembered preference, fact or instruction.

    ``key``/``value`` hold the structured form where one fits (the keys of
    ``agents.policies.memory_facts``: ``list_style=bullets``, ``spelling=british``,
    ``asking=at_most:1``, ``slot:duration=15 minutes``); ``text`` is always the readable form.
    ``kinds`` names the kinds of work (task template keys, space-separated) it applies to, empty
    for all. ``shared``: the owner lets it be used in replies other people read (off by
    default). Superseded and deleted items stay (with ``valid_to``) so the history can be shown.
    """

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_items"
    )
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.PERSONAL)
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, null=True, blank=True, related_name="memory_items"
    )
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.PREFERENCE)
    text = models.CharField(max_length=TEXT_MAX_CHARS)
    key = models.CharField(max_length=KEY_MAX_CHARS, blank=True, default="")
    value = models.CharField(max_length=VALUE_MAX_CHARS, blank=True, default="")
    kinds = models.CharField(
        max_length=KINDS_MAX_CHARS,
        blank=True,
        default="",
        help_text="Kinds of work (task template keys, space-separated) it applies to; empty: all.",
    )
    shared = models.BooleanField(
        default=False,
        help_text="Share with my workspaces: agents may use it in replies other people read.",
    )
    confidence = models.FloatField(default=0.8)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    pinned = models.BooleanField(default=False)
    valid_from = models.DateTimeField(default=timezone.now)
    valid_to = models.DateTimeField(null=True, blank=True)
    confirmed_at = models.DateTimeField(
        default=timezone.now, help_text="Last time this was said or confirmed (recency)."
    )
    times_confirmed = models.PositiveIntegerField(default=1)
    superseded_by = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    source_kind = models.CharField(max_length=16, choices=Source.choices, default=Source.MANUAL)
    source_task_id = models.PositiveBigIntegerField(null=True, blank=True)
    source_turn_id = models.PositiveBigIntegerField(null=True, blank=True)
    source_message_id = models.PositiveBigIntegerField(null=True, blank=True)
    source_person_id = models.PositiveBigIntegerField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-pinned", "-confirmed_at", "-id"]
        indexes = [
            # Current items only (partial): retrieval walks one person's items in one scope
            # newest first (``search.turn_rows``); reconciliation reads one (owner, scope, place).
            models.Index(
                fields=["owner", "scope", "workspace", "id"],
                condition=models.Q(status="active"),
                name="memory_item_active_owner_idx",
            ),
            models.Index(
                fields=["workspace", "scope", "id"],
                condition=models.Q(status="active"),
                name="memory_item_active_ws_idx",
            ),
            # The structured profile (keyed or pinned items) is read at every turn.
            models.Index(
                fields=["owner", "status", "scope", "workspace"],
                condition=PROFILE,
                name="memory_item_profile_idx",
            ),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0) & models.Q(confidence__lte=1),
                name="memory_confidence_0_1",
            ),
            models.CheckConstraint(
                condition=(
                    models.Q(scope="personal", workspace__isnull=True)
                    | (
                        models.Q(scope__in=["workspace", "team"])
                        & models.Q(workspace__isnull=False)
                    )
                ),
                name="memory_scope_matches_workspace",
            ),
        ]

    def __str__(self) -> str:
        return self.text[:60]

    @property
    def is_active(self) -> bool:
        return self.status == Status.ACTIVE

    @property
    def structured(self) -> str:
        return f"{self.key}={self.value}" if self.key else ""

    @property
    def kind_list(self) -> tuple[str, ...]:
        return tuple(self.kinds.split())

    def snapshot(self) -> dict[str, Any]:
        """The fields a history row records."""
        return {
            "scope": self.scope,
            "workspace_id": self.workspace_id,
            "kind": self.kind,
            "text": self.text,
            "key": self.key,
            "value": self.value,
            "kinds": self.kinds,
            "shared": self.shared,
            "confidence": self.confidence,
            "status": self.status,
            "pinned": self.pinned,
            "valid_from": self.valid_from.isoformat() if self.valid_from else None,
            "valid_to": self.valid_to.isoformat() if self.valid_to else None,
        }


class MemoryEmbedding(models.Model):
    """An item's vector for retrieval by meaning (only when an embedding model is configured).

    Portable storage on both databases (see docs/adr/0006): float32 values, unit length, so
    cosine similarity is a dot product. ``model`` names the embedding model (vectors of
    different models are never compared); ``text_hash`` is what was embedded, so re-embedding
    an unchanged item is a no-op.
    """

    item = models.OneToOneField(
        MemoryItem, on_delete=models.CASCADE, primary_key=True, related_name="embedding"
    )
    model = models.CharField(max_length=100)
    text_hash = models.CharField(max_length=64)
    vector = models.BinaryField()
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Embedding of item {self.item_id} ({self.model})"


class MemoryHistory(models.Model):
    """A row for every change to an item (append-only)."""

    class Action(models.TextChoices):
        CREATED = "created", "Created"
        CONFIRMED = "confirmed", "Said again (kept)"
        MERGED = "merged", "Merged into another item"
        SUPERSEDED = "superseded", "Replaced by a newer item"
        INVALIDATED = "invalidated", "No longer true"
        EDITED = "edited", "Edited"
        PINNED = "pinned", "Pinned"
        UNPINNED = "unpinned", "Unpinned"
        SHARED = "shared", "Shared with my workspaces"
        UNSHARED = "unshared", "No longer shared"
        DELETED = "deleted", "Deleted"

    item = models.ForeignKey(MemoryItem, on_delete=models.CASCADE, related_name="history")
    action = models.CharField(max_length=12, choices=Action.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    snapshot = models.JSONField(default=dict)
    note = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        ordering = ["item", "created_at", "id"]
        verbose_name_plural = "memory history"

    def __str__(self) -> str:
        return f"{self.action} #{self.item_id}"


class MemorySettings(models.Model):
    """Each person's memory switches. A missing row means the defaults."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="memory_settings",
    )
    enabled = models.BooleanField(default=True, help_text="Off: nothing is extracted or used.")
    review_mode = models.CharField(
        max_length=10, choices=ReviewMode.choices, default=ReviewMode.AUTO
    )
    admin_access_allowed = models.BooleanField(
        default=False, help_text="Let site admins read my memory (each access is audited)."
    )
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name_plural = "memory settings"

    def __str__(self) -> str:
        return f"Memory settings of user {self.user_id}"


class MemoryCandidate(models.Model):
    """Something an agent or the reflection job proposes to remember, awaiting review."""

    class Operation(models.TextChoices):
        REMEMBER = "remember", "Remember"
        FORGET = "forget", "Forget"

    class Decision(models.TextChoices):
        PENDING = "pending", "Pending"
        ACCEPTED = "accepted", "Accepted"
        REJECTED = "rejected", "Rejected"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memory_candidates"
    )
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.PERSONAL)
    workspace = models.ForeignKey(
        Workspace, on_delete=models.CASCADE, null=True, blank=True, related_name="+"
    )
    operation = models.CharField(
        max_length=10, choices=Operation.choices, default=Operation.REMEMBER
    )
    kind = models.CharField(max_length=12, choices=Kind.choices, default=Kind.PREFERENCE)
    text = models.CharField(max_length=TEXT_MAX_CHARS)
    key = models.CharField(max_length=KEY_MAX_CHARS, blank=True, default="")
    value = models.CharField(max_length=VALUE_MAX_CHARS, blank=True, default="")
    kinds = models.CharField(max_length=KINDS_MAX_CHARS, blank=True, default="")
    confidence = models.FloatField(default=0.6)
    decision = models.CharField(max_length=10, choices=Decision.choices, default=Decision.PENDING)
    source_kind = models.CharField(max_length=16, choices=Source.choices)
    source_task_id = models.PositiveBigIntegerField(null=True, blank=True)
    source_turn_id = models.PositiveBigIntegerField(null=True, blank=True)
    source_message_id = models.PositiveBigIntegerField(null=True, blank=True)
    source_person_id = models.PositiveBigIntegerField(null=True, blank=True)
    item = models.ForeignKey(
        MemoryItem, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["owner", "decision"], name="memory_candidate_owner_idx")]

    def __str__(self) -> str:
        return f"{self.operation}: {self.text[:60]}"


class ReflectionState(models.Model):
    """How far the reflection job has read a task's chat (keeps the job idempotent)."""

    task_id = models.PositiveBigIntegerField(primary_key=True)
    last_message_id = models.PositiveBigIntegerField(default=0)
    reflected_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"Reflection of task {self.task_id} up to message {self.last_message_id}"
