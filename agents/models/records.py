"""Typed views of the JSON a turn stores: its context (``Turn.context``, what the model and
the policy were shown) and the clarification policy's decision record
(``Turn.policy_decision``). The stored shape stays what ``agents.policies.adapter``
``decision_record`` builds, so review, exports and old rows read it unchanged; code that acts
on it reads these fields instead of ``record.get("decision") == "ask"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, cast


class TaskSummary(TypedDict):
    id: int
    title: str
    goal: str
    template: str


class ChatLine(TypedDict):
    id: int
    author: str
    kind: str
    body: str


class AnsweredQuestion(TypedDict):
    question: str
    answer: str


class _ShownContext(TypedDict):
    agent: str
    workspace_instructions: str
    instructions: str
    task: TaskSummary
    document: str
    document_chars: int
    messages: list[ChatLine]
    notes: list[str]
    answers: list[AnsweredQuestion]
    memory: list[str]  # prompt lines, each saying whose it is
    memory_item_ids: list[int]
    memory_items: list[dict[str, Any]]  # MemoryFact fields (agents.policies.memory_facts)
    request: str
    requested_by: str
    requested_by_id: int | None
    request_date: str  # ISO date the request's relative dates are read against
    trigger: str
    mode: str


class TurnContext(_ShownContext, total=False):
    """What a turn was shown (``agents.engine.context.build_context``), stored as JSON on the turn
    and read as a mapping by the policies (``agents.policies.adapter.decide_from_context``)."""

    policy_hint: str  # what the policy tells the model (the engine adds it to the prompt)
    asked_by: str  # another agent's name, when its message addressed this turn (issue 30)
    # The embedded model only: what the turn knows, for its reply's grounded first sentence
    # (``agents.policies.understand.grounding``), and the items retrieved before
    # ``memory_item_ids`` was narrowed to those the reply states.
    grounding: dict[str, Any]
    memory_item_ids_retrieved: list[int]
    # Sentences left out of what everyone reads because they repeated someone's unshared
    # memory (``agents.policies.private_memory``): how many, and the items' ids (no text).
    memory_withheld: dict[str, Any]


PolicyAction = Literal["ask", "suggest", "act"]
_ACTIONS: tuple[PolicyAction, ...] = ("ask", "suggest", "act")


@dataclass(frozen=True)
class PolicyStateRef:
    """The learning policy's state row a decision came from (``agents.services.learning``)."""

    id: int
    user_id: int | None


@dataclass(frozen=True)
class PolicyRecord:
    """What the policy decided for a turn, as stored on ``Turn.policy_decision``."""

    decision: PolicyAction
    question: str = ""  # the one question message, when it asks
    assumption: str = ""  # the "I assumed X" text, when it goes ahead on a guess
    policy: str = ""
    reason: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)  # the full Decision, for learning
    state_ref: PolicyStateRef | None = None
    stored: Mapping[str, Any] = field(default_factory=dict)  # the JSON as stored

    @property
    def asks(self) -> bool:
        return self.decision == "ask" and bool(self.question)

    @property
    def suggests(self) -> bool:
        return self.decision == "suggest"

    @classmethod
    def from_stored(cls, data: Mapping[str, Any] | None) -> PolicyRecord | None:
        """The record stored on a turn (None when the turn has none, or it is not a record)."""
        if not isinstance(data, Mapping):
            return None
        action = data.get("decision")
        ref = data.get("policy_state_ref")
        detail = data.get("detail")
        return cls(
            decision=cast(PolicyAction, action) if action in _ACTIONS else "act",
            question=str(data.get("question") or ""),
            assumption=str(data.get("assumption") or "").strip(),
            policy=str(data.get("policy") or ""),
            reason=str(data.get("reason") or ""),
            detail=detail if isinstance(detail, Mapping) else {},
            state_ref=(
                PolicyStateRef(id=int(ref.get("id") or 0), user_id=ref.get("user_id"))
                if isinstance(ref, Mapping)
                else None
            ),
            stored=dict(data),
        )

    def to_stored(self) -> dict[str, Any]:
        """The JSON for ``Turn.policy_decision`` (the record as the policy built it, plus the
        state row it came from)."""
        stored = dict(self.stored)
        if self.state_ref is not None:
            stored["policy_state_ref"] = {
                "id": self.state_ref.id,
                "user_id": self.state_ref.user_id,
            }
        return stored
