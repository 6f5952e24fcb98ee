"""/api/tasks/{id}/questions and /suggestions: the cards of the agents pane, answered, accepted
(as proposed or edited) and rejected through the same services as the pane's buttons."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest
from ninja import Query, Router

from agents import selectors
from agents.api.schemas import (
    AcceptIn,
    AnswerIn,
    QuestionFilter,
    QuestionOut,
    QuestionPage,
    SuggestionFilter,
    SuggestionOut,
    SuggestionPage,
    question_out,
    suggestion_out,
)
from agents.services import questions as question_services
from agents.services import suggestions as suggestion_services
from collab.api.auth import current_user
from collab.api.pagination import cursor_page
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
