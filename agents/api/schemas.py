"""What the agents' API operations read and write. Field names are the public contract."""

from __future__ import annotations

from datetime import datetime

from ninja import Field, Schema

from agents.models import Question, Suggestion
from agents.schemas import TEXT_MAX
from collab.api.pagination import PageFields, PageQuery
from collab.api.schemas import StoredText, body_config, stripped_text_schema


def username(user: object) -> str | None:
    return None if user is None else str(user.get_username())  # type: ignore[attr-defined]


class QuestionOut(Schema):
    id: int
    task_id: int
    agent_id: int
    agent: str = Field(description="The asking agent's name.")
    turn_id: int | None = Field(description="The turn that asked it.")
    text: str
    status: Question.Status = Field(
        description="`open`; `answered`; `withdrawn`; `expired` (no answer in time: the agent "
        "went ahead on its best guess, and a late answer still reaches it)."
    )
    can_be_answered: bool = Field(description="Open or expired.")
    answer: str
    answered_by: str | None
    answered_at: datetime | None
    expired_at: datetime | None
    created_at: datetime


def question_out(question: Question) -> dict[str, object]:
    return {
        "id": question.pk,
        "task_id": question.task_id,
        "agent_id": question.agent_id,
        "agent": question.agent.name,
        "turn_id": question.turn_id,
        "text": question.text,
        "status": question.status,
        "can_be_answered": question.can_be_answered,
        "answer": question.answer,
        "answered_by": username(question.answered_by),
        "answered_at": question.answered_at,
        "expired_at": question.expired_at,
        "created_at": question.created_at,
    }


class QuestionFilter(PageQuery):
    status: Question.Status | None = Field(None, description="Only questions in this status.")


class QuestionPage(PageFields):
    questions: list[QuestionOut] = Field(description="Oldest first.")


class AnswerIn(Schema):
    model_config = body_config({"answer": "May 12"})

    answer: StoredText = Field(
        description=f"Up to {TEXT_MAX:,} characters, not counting spaces around them; not blank.",
        json_schema_extra=stripped_text_schema(TEXT_MAX),
    )


class SuggestionOut(Schema):
    id: int
    task_id: int
    agent_id: int | None = Field(description="None for a person's suggestion.")
    agent: str = Field(description="The proposing agent's name (or the person's username).")
    proposed_by: str | None = Field(description="The person who proposed it, if a person did.")
    turn_id: int | None
    find: str = Field(description="The document text it replaces; empty: it appends.")
    replace: str = Field(description="What the agent proposes instead.")
    rationale: str
    diff: str = Field(description="A unified diff of the change, when it was proposed.")
    status: Suggestion.Status = Field(
        description="`proposed`; `accepted`; `edited` (accepted with a person's text); "
        "`rejected`; `stale` (its text had left the document when someone accepted it)."
    )
    final_text: str = Field(description="What was applied (after any edit).")
    decided_by: str | None
    decided_at: datetime | None
    created_at: datetime


def suggestion_out(suggestion: Suggestion) -> dict[str, object]:
    return {
        "id": suggestion.pk,
        "task_id": suggestion.task_id,
        "agent_id": suggestion.agent_id,
        "agent": suggestion.proposer_name,
        "proposed_by": username(suggestion.proposed_by),
        "turn_id": suggestion.turn_id,
        "find": suggestion.find,
        "replace": suggestion.replace,
        "rationale": suggestion.rationale,
        "diff": suggestion.diff,
        "status": suggestion.status,
        "final_text": suggestion.final_text,
        "decided_by": username(suggestion.decided_by),
        "decided_at": suggestion.decided_at,
        "created_at": suggestion.created_at,
    }


class SuggestionFilter(PageQuery):
    status: Suggestion.Status | None = Field(None, description="Only suggestions in this status.")


class SuggestionPage(PageFields):
    suggestions: list[SuggestionOut] = Field(description="Oldest first.")


class AcceptIn(Schema):
    model_config = body_config({"text": "Venue: the boathouse"})

    text: StoredText | None = Field(
        None,
        max_length=TEXT_MAX * 4,
        description="Your edited version of the change; omitted or null accepts it as proposed.",
    )


class ProposeIn(Schema):
    model_config = body_config(
        {"find": "Venue: TBD", "replace": "Venue: the boathouse", "rationale": "Booked today"}
    )

    find: StoredText = Field(
        "", max_length=TEXT_MAX * 4, description="Text of the document to replace; '' appends."
    )
    replace: StoredText = Field(max_length=TEXT_MAX * 4, description="What you propose instead.")
    rationale: StoredText = Field("", max_length=TEXT_MAX)
