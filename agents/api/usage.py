"""Usage over the API: the review pages' usage figures (tokens and cost of model calls per day,
per model, agent, person or workspace, and the workspace's monthly budget), for a workspace's
owners and for staff, through the same code as the pages (``agents.review.usage`` with the
page's form and ``get_review_scope`` / ``require_staff``), and the review settings page (the
budget and what exports may include, ``services.update_review_settings``)."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any, Literal

from django.core.exceptions import ValidationError
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema

from agents.review import services, usage
from agents.review.forms import UsageForm
from agents.review.selectors import (
    ReviewScope,
    get_review_scope,
    get_review_settings,
    require_staff,
)
from collab.api.auth import current_user
from collab.api.schemas import BadRequest, Error, PathId, body_config

workspace_router = Router(tags=["review"])  # under /api/workspaces
site_router = Router(tags=["review"])  # under /api/review (staff)

REVIEW = {400: BadRequest, 401: Error, 403: Error, 404: Error}
STAFF = {400: BadRequest, 401: Error, 404: Error}


class UsageQuery(Schema):
    since: date | None = Field(None, description="From this day (UTC); default 29 days before.")
    until: date | None = Field(None, description="To this day (inclusive); default today.")
    by: Literal["model", "agent", "person", "workspace"] | None = Field(
        None, description="Group by; default `model`."
    )


class UsageRowOut(Schema):
    day: date
    key: str | None = Field(
        description="The model's name, or the agent's, person's or workspace's id."
    )
    label: str
    calls: int
    tokens_in: int
    tokens_out: int
    cost: Decimal


class UsageTotalOut(Schema):
    label: str
    calls: int
    tokens_in: int
    tokens_out: int
    cost: Decimal


class BudgetOut(Schema):
    state: str = Field(description="`none` (no budget), `ok`, `warning` or `exceeded`.")
    spent: Decimal = Field(description="This calendar month (UTC).")
    limit: Decimal | None
    percent: float | None
    warn_at_percent: int
    hard_stop: bool = Field(description="Agents start no turn once it is exceeded.")
    blocked: bool
    message: str


class UsageOut(Schema):
    since: date
    until: date
    by: str
    rows: list[UsageRowOut] = Field(description="One per day and group, oldest first.")
    totals: list[UsageTotalOut] = Field(description="Per group, the costliest first.")
    all_free: bool = Field(description="Every call cost 0 (local or test models).")
    budget: BudgetOut | None = Field(description="The workspace's budget; null for staff's all.")


def _usage(scope: ReviewScope, query: UsageQuery) -> dict[str, Any]:
    form = UsageForm({k: str(v) for k, v in query.dict().items() if v is not None})
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    since, until, by = (
        form.cleaned_data["since"],
        form.cleaned_data["until"],
        form.cleaned_data["by"],
    )
    rows = usage.usage_by_day(scope=scope, since=since, until=until, by=by)
    budget = usage.check_budget(scope.workspace) if scope.workspace is not None else None
    return {
        "since": since,
        "until": until,
        "by": by,
        "rows": [
            {**row.__dict__, "key": None if row.key is None else str(row.key)} for row in rows
        ],
        "totals": [total.__dict__ for total in usage.totals_by_key(rows)],
        "all_free": bool(rows) and not any(row.cost for row in rows),
        "budget": None
        if budget is None
        else {
            "state": budget.state,
            "spent": budget.spent,
            "limit": budget.limit,
            "percent": budget.percent,
            "warn_at_percent": budget.warn_at_percent,
            "hard_stop": budget.hard_stop,
            "blocked": budget.blocked,
            "message": budget.message,
        },
    }


@workspace_router.get(
    "/{workspace_id}/review/usage",
    response={200: UsageOut, **REVIEW},
    summary="A workspace's model usage per day (tokens, cost) and its monthly budget (owners)",
)
def workspace_usage(
    request: HttpRequest, workspace_id: PathId, query: Query[UsageQuery]
) -> dict[str, Any]:
    """As the review usage page: at most 366 days; `since` after `until` is a 400."""
    return _usage(get_review_scope(current_user(request), workspace_id), query)


@site_router.get(
    "/usage",
    response={200: UsageOut, **STAFF},
    summary="Every workspace's model usage per day (staff)",
)
def site_usage(request: HttpRequest, query: Query[UsageQuery]) -> dict[str, Any]:
    return _usage(require_staff(current_user(request)), query)


# --- the budget and export settings (the review settings page) ------------------------------


class ReviewSettingsOut(Schema):
    monthly_budget: Decimal | None = Field(description="Per calendar month (UTC); null: none.")
    warn_at_percent: int
    hard_stop: bool = Field(description="Agents stop taking turns once the budget is spent.")
    export_personal_memory: bool = Field(
        description="Exports may include personal memory of people who allowed admins to read it."
    )


class ReviewSettingsIn(Schema):
    """Fields left out keep their value; `"monthly_budget": null` removes the budget."""

    model_config = body_config({"monthly_budget": "50.00", "warn_at_percent": 80})

    monthly_budget: Decimal | None = Field(None, ge=0, max_digits=12, decimal_places=2)
    warn_at_percent: int | None = Field(None, ge=1, le=100)
    hard_stop: bool | None = None
    export_personal_memory: bool | None = None


def _settings_out(found: Any) -> dict[str, Any]:
    return {name: getattr(found, name) for name in ReviewSettingsOut.model_fields}


@workspace_router.get(
    "/{workspace_id}/review/settings",
    response={200: ReviewSettingsOut, **REVIEW},
    summary="Read a workspace's model budget and export settings (owners)",
)
def read_review_settings(request: HttpRequest, workspace_id: PathId) -> dict[str, Any]:
    scope = get_review_scope(current_user(request), workspace_id)
    assert scope.workspace is not None
    return _settings_out(get_review_settings(scope.workspace))


@workspace_router.put(
    "/{workspace_id}/review/settings",
    response={200: ReviewSettingsOut, **REVIEW},
    summary="Change a workspace's model budget and export settings (owners); audited",
)
def put_review_settings(
    request: HttpRequest, workspace_id: PathId, payload: ReviewSettingsIn
) -> dict[str, Any]:
    user = current_user(request)
    scope = get_review_scope(user, workspace_id)
    assert scope.workspace is not None
    current = _settings_out(get_review_settings(scope.workspace))
    given = {name: getattr(payload, name) for name in payload.model_fields_set}
    if given.get("warn_at_percent") is None:
        given.pop("warn_at_percent", None)
    for flag in ("hard_stop", "export_personal_memory"):
        if given.get(flag) is None:
            given.pop(flag, None)
    saved = services.update_review_settings(actor=user, scope=scope, **{**current, **given})
    return _settings_out(saved)
