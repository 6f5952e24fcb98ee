"""/api/memory (continued): the rest of the Memory page's actions on the caller's own memory:
an item's "share with my workspaces" and "use everywhere" switches, the review inbox (what
agents noticed, accepted or rejected), and "forget everything". Through the page's services;
never anyone else's memory (another person's item or suggestion is a 404)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from agents.api.memory import READ, WRITE, MemoryItemOut, own_item
from agents.memory import selectors, services
from agents.memory.forms import ForgetEverythingForm
from agents.memory.models import Kind, MemoryCandidate, Scope
from collab.api.auth import current_user
from collab.api.pagination import PageFields, PageQuery, cursor_page
from collab.api.schemas import PathId, body_config

router = Router(tags=["memory"])


class ShareIn(Schema):
    model_config = body_config({"shared": True})

    shared: bool = Field(
        description="true: agents may use it in replies other people read (in your "
        "workspaces); false (the default): only in replies to your own requests."
    )


class CandidateOut(Schema):
    id: int
    operation: MemoryCandidate.Operation = Field(description="`remember` or `forget`.")
    scope: Scope
    workspace_id: int | None
    kind: Kind
    text: str
    key: str
    value: str
    confidence: float
    source_kind: str = Field(description="Who noticed it: an agent, the reflection job, …")
    source_task_id: int | None
    decision: MemoryCandidate.Decision
    created_at: datetime


class CandidatePage(PageFields):
    candidates: list[CandidateOut] = Field(description="Oldest first.")


class DecidedOut(Schema):
    candidate: CandidateOut
    action: str = Field(
        description="What accepting it did: `added`, `superseded` (replacing an older item), "
        "`kept` (already known), `invalidated` (a forget), or `ignored` (memory is off)."
    )
    item: MemoryItemOut | None = Field(description="The item it became, if any.")


class ForgetEverythingIn(Schema):
    model_config = body_config({"confirm": "forget everything"})

    confirm: str = Field(max_length=40, description="Type `forget everything` to confirm.")


class ForgottenOut(Schema):
    items: int
    history: int
    candidates: int


def _candidate(candidate: MemoryCandidate) -> dict[str, Any]:
    return {
        "id": candidate.pk,
        "operation": candidate.operation,
        "scope": candidate.scope,
        "workspace_id": candidate.workspace_id,
        "kind": candidate.kind,
        "text": candidate.text,
        "key": candidate.key,
        "value": candidate.value,
        "confidence": candidate.confidence,
        "source_kind": candidate.source_kind,
        "source_task_id": candidate.source_task_id,
        "decision": candidate.decision,
        "created_at": candidate.created_at,
    }


@router.put(
    "/items/{item_id}/share",
    response={200: MemoryItemOut, **WRITE},
    summary="Share a memory with your workspaces, or stop sharing it",
)
def share_item(request: HttpRequest, item_id: PathId, payload: ShareIn) -> Any:
    """409 when the item was forgotten or replaced."""
    user = current_user(request)
    return services.set_shared(user=user, item=own_item(user, item_id), shared=payload.shared)


@router.post(
    "/items/{item_id}/everywhere",
    response={200: MemoryItemOut, **WRITE},
    summary="Use a memory kept for one workspace everywhere",
)
def use_everywhere(request: HttpRequest, item_id: PathId) -> Any:
    """The item moves to your personal memory (the answer); the workspace item ends, pointing
    to it. 400 for an item that is not kept for one workspace; 409 when it was forgotten or
    replaced."""
    user = current_user(request)
    result = services.use_everywhere(user=user, item=own_item(user, item_id))
    return result.item


@router.get(
    "/candidates",
    response={200: CandidatePage, **READ},
    summary="List what agents noticed about you, waiting for your review, newest page first",
)
def list_candidates(request: HttpRequest, page: Query[PageQuery]) -> dict[str, Any]:
    found = cursor_page(selectors.list_pending_candidates(current_user(request)), page)
    return {"candidates": [_candidate(c) for c in found.rows], **found.fields()}


@router.post(
    "/candidates/{candidate_id}/accept",
    response={200: DecidedOut, **WRITE},
    summary="Accept something an agent noticed about you: it is remembered",
)
def accept_candidate(request: HttpRequest, candidate_id: PathId) -> dict[str, Any]:
    """Reconciled with what you have (added, or replacing an older item). 409 when it was
    already decided."""
    user = current_user(request)
    candidate = selectors.get_candidate_for_user(user, candidate_id)
    result = services.accept_candidate(user=user, candidate=candidate)
    candidate.refresh_from_db()
    return {"candidate": _candidate(candidate), "action": result.action, "item": result.item}


@router.post(
    "/candidates/{candidate_id}/reject",
    response={200: CandidateOut, **WRITE},
    summary="Reject something an agent noticed about you: it is not remembered",
)
def reject_candidate(request: HttpRequest, candidate_id: PathId) -> dict[str, Any]:
    """409 when it was already decided."""
    user = current_user(request)
    candidate = selectors.get_candidate_for_user(user, candidate_id)
    return _candidate(services.reject_candidate(user=user, candidate=candidate))


@router.post(
    "/forget-everything",
    response={200: ForgottenOut, **READ},
    summary="Forget everything agents remember about you (your items, their history, the inbox)",
)
def forget_everything(request: HttpRequest, payload: ForgetEverythingIn) -> dict[str, int]:
    """Erased for good; team memory you wrote stays (it is the workspace's); the audit log
    keeps the counts only. 400 unless `confirm` is `forget everything`."""
    form = ForgetEverythingForm({"confirm": payload.confirm})
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    return services.forget_everything(user=current_user(request))


class HistoryOut(Schema):
    id: int
    action: str = Field(description="`created`, `edited`, `superseded`, `shared`, …")
    actor: str | None
    snapshot: dict[str, Any] = Field(description="The item as it was after this change.")
    note: str
    created_at: datetime


@router.get(
    "/items/{item_id}/history",
    response={200: list[HistoryOut], **READ},
    summary="A memory's history: every change, who made it, oldest first",
)
def item_history(request: HttpRequest, item_id: PathId) -> list[dict[str, Any]]:
    """As the item's page; also for an item that was forgotten or replaced."""
    user = current_user(request)
    return [
        {
            "id": row.pk,
            "action": row.action,
            "actor": row.actor.get_username() if row.actor else None,
            "snapshot": row.snapshot,
            "note": row.note,
            "created_at": row.created_at,
        }
        for row in selectors.list_history(own_item(user, item_id))
    ]
