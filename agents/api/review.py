"""Review over the API, for a workspace's owners and for staff (outsiders 404, other members
403, as on the review pages): the traces list with the review page's filters, one turn's trace,
and the exports (JSONL events, CSV turns) exactly as the review pages produce them. Every read
goes through ``agents.review`` (its selectors, its filter form, ``services.start_export`` and
``services.open_turn_trace``): never a second path."""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any, Literal

from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, StreamingHttpResponse
from ninja import Field, Query, Router, Schema

from agents.api.schemas import QuestionOut, SuggestionOut, question_out, suggestion_out, username
from agents.api.turns import ActionOut, TurnOut, turn_out
from agents.models import Turn, TurnStatus
from agents.review import services, traces
from agents.review.export_spec import ExportSpec
from agents.review.forms import ExportRangeForm, TraceFilterForm
from agents.review.selectors import ReviewScope, get_review_scope, get_review_task, require_staff
from collab.api.auth import current_user
from collab.api.schemas import MAX_ID, BadRequest, Error, PathId

workspace_router = Router(tags=["review"])  # under /api/workspaces
task_router = Router(tags=["review"])  # under /api/tasks
site_router = Router(tags=["review"])  # under /api/review (staff)

REVIEW = {400: BadRequest, 401: Error, 403: Error, 404: Error}
STAFF = {400: BadRequest, 401: Error, 404: Error}
JSONL = "application/x-ndjson"


class TraceQuery(Schema):
    """The filters of the review page's traces list (agents/review/forms.py)."""

    view: Literal["calls", "turns"] = Field(
        "calls", description="`calls`: one row per model call; `turns`: one row per turn."
    )
    q: str | None = Field(None, max_length=200, description="Words in prompts and responses.")
    task: int | None = Field(None, ge=1, le=MAX_ID, description="Only this task.")
    agent: int | None = Field(None, ge=1, le=MAX_ID, description="Only this agent.")
    model: str | None = Field(None, max_length=200)
    status: TurnStatus | None = Field(None, description="The turn's status.")
    decision: Literal["ask", "suggest", "act"] | None = Field(None)
    policy: str | None = Field(None, max_length=40)
    since: date | None = Field(None, description="From this day (inclusive).")
    until: date | None = Field(None, description="To this day (inclusive).")
    has_feedback: Literal["yes", "no"] | None = None
    errored: Literal["yes", "no"] | None = Field(None, description="Has an error.")
    before: str | None = Field(
        None, max_length=40, description="`next_before` of the previous page."
    )


class StaffTraceQuery(TraceQuery):
    workspace: int | None = Field(None, ge=1, le=MAX_ID, description="Only this workspace.")


class TracePageOut(Schema):
    view: str
    rows: list[dict[str, Any]] = Field(
        description="Newest first: the review page's columns (`id`, `created_at`, `model`, "
        "`tokens_in`, `tokens_out`, `cost`, `agent__name`, ...)."
    )
    next_before: str | None = Field(description="Pass as `before` for the next (older) page.")


class ModelCallOut(Schema):
    id: int
    created_at: datetime
    provider: str
    model: str
    purpose: str
    messages: Any = Field(description="What the model was sent (others' unshared memory withheld).")
    response: str
    tokens_in: int
    tokens_out: int
    latency_ms: int
    cost: Decimal
    error: str


class FeedbackRowOut(Schema):
    user: str | None
    target_kind: str
    target_id: int | None
    rating: str
    unnecessary_question: bool
    comment: str
    learned_reward: float | None
    updated_at: datetime


class TurnTraceOut(TurnOut):
    requested_by: str | None
    policy_name: str
    policy_decision: Any
    decision: Any
    context: Any = Field(description="What the agent was given; others' unshared memory withheld.")
    inputs: Any
    stages: Any = Field(description="Each stage's time.")
    tokens_in: int
    tokens_out: int
    cost: Decimal
    calls: list[ModelCallOut]
    actions: list[ActionOut]
    suggestions: list[SuggestionOut]
    questions: list[QuestionOut]
    feedback: list[FeedbackRowOut]
    memory_item_ids: list[int]


def _trace_page(scope: ReviewScope, query: TraceQuery) -> dict[str, Any]:
    data = {key: str(value) for key, value in query.dict().items() if value is not None}
    choices = traces.filter_choices(scope)
    form = TraceFilterForm(data, agents=choices["agents"], staff=scope.workspace is None)
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    view = form.cleaned_data.get("view") or "calls"
    lister = traces.list_turns if view == "turns" else traces.list_model_calls
    page = lister(scope=scope, filters=form.to_filter(), before=form.cleaned_data.get("before"))
    return {"view": view, "rows": page.rows, "next_before": page.next_before}


class RangeQuery(Schema):
    since: date | None = Field(None, description="From this day (inclusive).")
    until: date | None = Field(None, description="To this day (inclusive).")


def _stream(lines: Any, *, content_type: str, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _range_export(request: HttpRequest, scope: ReviewScope, query: RangeQuery, fmt: str) -> Any:
    form = ExportRangeForm({k: str(v) for k, v in query.dict().items() if v is not None})
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    spec = ExportSpec(
        workspace_id=scope.workspace_id,
        since=form.cleaned_data.get("since"),
        until=form.cleaned_data.get("until"),
    )
    lines = services.start_export(actor=current_user(request), scope=scope, spec=spec, fmt=fmt)
    name = f"workspace-{scope.workspace_id}" if scope.workspace is not None else "all"
    if fmt == "csv":
        return _stream(lines, content_type="text/csv", filename=f"{name}-turns.csv")
    return _stream(lines, content_type=JSONL, filename=f"{name}.jsonl")


def _file(content_type: str, example: str) -> dict[str, Any]:
    """The OpenAPI of an operation that answers a file, not JSON."""
    return {
        "responses": {
            200: {
                "description": "The file, streamed.",
                "content": {content_type: {"schema": {"type": "string"}, "example": example}},
            }
        }
    }


JSONL_EXAMPLE = (
    '{"timestamp": "2026-12-01T09:00:00Z", "event": "message.posted", "event_id": "message-1", '
    '"role": "user_alice", "action": "SEND_TEAMMATE_MESSAGE(...)", ...}\n'
)
CSV_EXAMPLE = "id,created_at,task_id,agent,status,...\n1,2026-12-01T09:00:00Z,7,Mira,done,...\n"


# --- workspace (owners and staff) ------------------------------------------------------------


@workspace_router.get(
    "/{workspace_id}/review/traces",
    response={200: TracePageOut, **REVIEW},
    summary="List a workspace's traces (model calls or turns) with the review filters (owners)",
)
def workspace_traces(
    request: HttpRequest, workspace_id: PathId, query: Query[TraceQuery]
) -> dict[str, Any]:
    return _trace_page(get_review_scope(current_user(request), workspace_id), query)


@workspace_router.get(
    "/{workspace_id}/review/export",
    response={200: None, **REVIEW},
    summary="Export a workspace's event log as JSONL, as the review page does (owners)",
    openapi_extra=_file(JSONL, JSONL_EXAMPLE),
)
def workspace_export(request: HttpRequest, workspace_id: PathId, query: Query[RangeQuery]) -> Any:
    """Audited. Others' unshared memory is left out unless the workspace and the person allow
    it (the review settings)."""
    scope = get_review_scope(current_user(request), workspace_id)
    return _range_export(request, scope, query, "jsonl")


@workspace_router.get(
    "/{workspace_id}/review/turns.csv",
    response={200: None, **REVIEW},
    summary="Export a workspace's turns as CSV, as the review page does (owners)",
    openapi_extra=_file("text/csv", CSV_EXAMPLE),
)
def workspace_turns_csv(
    request: HttpRequest, workspace_id: PathId, query: Query[RangeQuery]
) -> Any:
    scope = get_review_scope(current_user(request), workspace_id)
    return _range_export(request, scope, query, "csv")


# --- task (owners and staff) -----------------------------------------------------------------


@task_router.get(
    "/{task_id}/turns/{turn_id}/trace",
    response={200: TurnTraceOut, **REVIEW},
    summary="Get one turn's whole trace: model calls, decision, actions, feedback (owners)",
)
def turn_trace(request: HttpRequest, task_id: PathId, turn_id: PathId) -> dict[str, Any]:
    """As the review page shows it: other people's unshared memory is withheld; a staff read
    of memory its owner let admins read is audited."""
    user = current_user(request)
    if not Turn.objects.filter(pk=turn_id, task_id=task_id).exists():
        raise Http404("No such turn.")
    _scope, trace = services.open_turn_trace(viewer=user, turn_id=turn_id)
    turn = trace.turn
    return {
        **turn_out(turn),
        "requested_by": username(turn.requested_by),
        "policy_name": turn.policy_name,
        "policy_decision": turn.policy_decision,
        "decision": turn.decision,
        "context": turn.context,
        "inputs": turn.inputs,
        "stages": turn.stages,
        "tokens_in": turn.tokens_in,
        "tokens_out": turn.tokens_out,
        "cost": turn.cost,
        "calls": trace.calls,
        "actions": trace.actions,
        "suggestions": [suggestion_out(s) for s in trace.suggestions],
        "questions": [question_out(q) for q in trace.questions],
        "feedback": [
            {
                "user": username(row.user),
                "target_kind": row.target_kind,
                "target_id": row.target_id,
                "rating": row.rating,
                "unnecessary_question": row.unnecessary_question,
                "comment": row.comment,
                "learned_reward": row.learned_reward,
                "updated_at": row.updated_at,
            }
            for row in trace.feedback
        ],
        "memory_item_ids": trace.memory_ids,
    }


@task_router.get(
    "/{task_id}/review/export",
    response={200: None, **REVIEW},
    summary="Export a task's event log as JSONL, as the replay page does (owners)",
    openapi_extra=_file(JSONL, JSONL_EXAMPLE),
)
def task_export(request: HttpRequest, task_id: PathId) -> Any:
    user = current_user(request)
    task, scope = get_review_task(user, task_id)
    spec = ExportSpec(task_id=task.pk)
    lines = services.start_export(actor=user, scope=scope, spec=spec, fmt="jsonl")
    return _stream(lines, content_type=JSONL, filename=f"task-{task.pk}.jsonl")


# --- everything (staff) ----------------------------------------------------------------------


@site_router.get(
    "/traces",
    response={200: TracePageOut, **STAFF},
    summary="List every workspace's traces with the review filters (staff)",
)
def site_traces(request: HttpRequest, query: Query[StaffTraceQuery]) -> dict[str, Any]:
    return _trace_page(require_staff(current_user(request)), query)


@site_router.get(
    "/export",
    response={200: None, **STAFF},
    summary="Export every workspace's event log as JSONL (staff)",
    openapi_extra=_file(JSONL, JSONL_EXAMPLE),
)
def site_export(request: HttpRequest, query: Query[RangeQuery]) -> Any:
    return _range_export(request, require_staff(current_user(request)), query, "jsonl")


@site_router.get(
    "/turns.csv",
    response={200: None, **STAFF},
    summary="Export every workspace's turns as CSV (staff)",
    openapi_extra=_file("text/csv", CSV_EXAMPLE),
)
def site_turns_csv(request: HttpRequest, query: Query[RangeQuery]) -> Any:
    return _range_export(request, require_staff(current_user(request)), query, "csv")
