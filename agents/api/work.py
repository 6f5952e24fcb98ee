"""/api/tasks/{id}/questions and /suggestions: the cards of the agents pane, answered, accepted
(as proposed or edited) and rejected through the same services as the pane's buttons."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status

from agents import selectors
from agents.api.schemas import (
    AcceptIn,
    AnswerIn,
    ProposeIn,
    QuestionFilter,
    QuestionOut,
    QuestionPage,
    SuggestionFilter,
    SuggestionOut,
    SuggestionPage,
    question_out,
    suggestion_out,
    username,
)
from agents.models import Assumption
from agents.services import questions as question_services
from agents.services import suggestions as suggestion_services
from collab.api.auth import current_user
from collab.api.pagination import PageFields, PageQuery, cursor_page
from collab.api.schemas import BadRequest, Error, PathId
from collab.tasks.selectors import get_task_access

router = Router(tags=["questions and suggestions"])

READ = {400: BadRequest, 401: Error, 404: Error}
DECIDE = {**READ, 403: Error, 409: Error}


@router.get(
    "/{task_id}/questions",
    response={200: QuestionPage, **READ},
    summary="List the agents' questions on a task, newest page first (any member)",
)
def list_questions(
    request: HttpRequest, task_id: PathId, page: Query[QuestionFilter]
) -> dict[str, Any]:
    access = get_task_access(current_user(request), task_id)
    found = cursor_page(selectors.list_task_questions(access.task, status=page.status), page)
    return {"questions": [question_out(q) for q in found.rows], **found.fields()}


@router.post(
    "/{task_id}/questions/{question_id}/answer",
    response={200: QuestionOut, **DECIDE},
    summary="Answer an agent's question; the agent resumes (owners and editors)",
)
def answer_question(
    request: HttpRequest, task_id: PathId, question_id: PathId, payload: AnswerIn
) -> dict[str, Any]:
    """409 when the question is no longer open (answered or withdrawn). An expired question
    still takes an answer: the agent went ahead on its best guess and hears it late."""
    access = get_task_access(current_user(request), task_id)
    question = selectors.get_task_question(access, question_id)
    answered = question_services.answer_question(
        membership=access.membership, question=question, answer=payload.answer
    )
    return question_out(answered)


@router.get(
    "/{task_id}/suggestions",
    response={200: SuggestionPage, **READ},
    summary="List the agents' suggestions on a task, newest page first (any member)",
)
def list_suggestions(
    request: HttpRequest, task_id: PathId, page: Query[SuggestionFilter]
) -> dict[str, Any]:
    access = get_task_access(current_user(request), task_id)
    found = cursor_page(selectors.list_task_suggestions(access.task, status=page.status), page)
    return {"suggestions": [suggestion_out(s) for s in found.rows], **found.fields()}


@router.post(
    "/{task_id}/suggestions",
    response={201: SuggestionOut, **DECIDE},
    summary="Propose a change as yourself: a card others accept, edit or reject (owners and "
    "editors)",
)
def propose_suggestion(
    request: HttpRequest, task_id: PathId, payload: ProposeIn
) -> Status[dict[str, Any]]:
    """As the MCP tool `propose_suggestion`. 409 when `find` is not in the live document (read
    it again)."""
    access = get_task_access(current_user(request), task_id)
    proposed = suggestion_services.propose_suggestion(
        membership=access.membership,
        task=access.task,
        find=payload.find,
        replace=payload.replace,
        rationale=payload.rationale,
    )
    return Status(201, suggestion_out(proposed))


@router.post(
    "/{task_id}/suggestions/{suggestion_id}/accept",
    response={200: SuggestionOut, **DECIDE},
    summary="Accept a suggestion, as proposed or with your edited text (owners and editors)",
)
def accept_suggestion(
    request: HttpRequest, task_id: PathId, suggestion_id: PathId, payload: AcceptIn
) -> dict[str, Any]:
    """Send `{}` to accept it as proposed, `{"text": "..."}` to apply your version instead.
    409 when it was already decided, or when the text it changes is no longer in the document
    (it is then marked `stale`)."""
    access = get_task_access(current_user(request), task_id)
    suggestion = selectors.get_task_suggestion(access, suggestion_id)
    accepted = suggestion_services.accept_suggestion(
        membership=access.membership, suggestion=suggestion, text=payload.text
    )
    return suggestion_out(accepted)


@router.post(
    "/{task_id}/suggestions/{suggestion_id}/reject",
    response={200: SuggestionOut, 401: Error, 403: Error, 404: Error, 409: Error, 400: BadRequest},
    summary="Reject a suggestion (owners and editors)",
)
def reject_suggestion(
    request: HttpRequest, task_id: PathId, suggestion_id: PathId
) -> dict[str, Any]:
    """409 when it was already decided."""
    access = get_task_access(current_user(request), task_id)
    suggestion = selectors.get_task_suggestion(access, suggestion_id)
    rejected = suggestion_services.reject_suggestion(
        membership=access.membership, suggestion=suggestion
    )
    return suggestion_out(rejected)


# --- Assumptions: a question nobody answered in time, the agent's best guess, and its Undo ---


class AssumptionOut(Schema):
    id: int
    task_id: int
    agent_id: int
    agent: str
    question_id: int = Field(description="The question it answered itself (open again on Undo).")
    turn_id: int = Field(description="The turn that went ahead on the guess.")
    text: str = Field(description="What the agent assumed, as it said in the chat.")
    status: Assumption.Status
    undone_by: str | None
    undone_at: datetime | None
    created_at: datetime


class AssumptionPage(PageFields):
    assumptions: list[AssumptionOut] = Field(description="Oldest first.")


def assumption_out(assumption: Assumption) -> dict[str, Any]:
    return {
        "id": assumption.pk,
        "task_id": assumption.task_id,
        "agent_id": assumption.agent_id,
        "agent": assumption.agent.name,
        "question_id": assumption.question_id,
        "turn_id": assumption.turn_id,
        "text": assumption.text,
        "status": assumption.status,
        "undone_by": username(assumption.undone_by),
        "undone_at": assumption.undone_at,
        "created_at": assumption.created_at,
    }


@router.get(
    "/{task_id}/assumptions",
    response={200: AssumptionPage, **READ},
    summary="List the agents' assumptions on a task (unanswered questions), newest page first",
)
def list_assumptions(
    request: HttpRequest, task_id: PathId, page: Query[PageQuery]
) -> dict[str, Any]:
    access = get_task_access(current_user(request), task_id)
    found = cursor_page(selectors.list_task_assumptions(access.task), page)
    return {"assumptions": [assumption_out(a) for a in found.rows], **found.fields()}


@router.post(
    "/{task_id}/assumptions/{assumption_id}/undo",
    response={200: AssumptionOut, **DECIDE},
    summary="Undo an agent's assumption: the document as before, the question open again "
    "(owners and editors)",
)
def undo_assumption(request: HttpRequest, task_id: PathId, assumption_id: PathId) -> Any:
    """As the assumption message's Undo button: the document goes back to how it was before
    that turn (a new edit by you; the history keeps everything) and the question waits for an
    answer. 409 when it was undone already."""
    access = get_task_access(current_user(request), task_id)
    assumption = selectors.get_task_assumption(access, assumption_id)
    undone = question_services.undo_assumption(membership=access.membership, assumption=assumption)
    return assumption_out(selectors.get_task_assumption(access, undone.pk))
