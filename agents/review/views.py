"""Review pages: traces, replay, metrics, usage and budget, settings, exports.

Staff see everything (pages without a workspace in the URL are staff-only and 404 for anyone
else); a workspace's owners see that workspace's pages; other members get 403, outsiders 404.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpResponse, HttpResponseBase, StreamingHttpResponse
from django.shortcuts import redirect, render
from django.utils import timezone
from django.views.decorators.http import require_GET, require_http_methods

from agents.review import metrics, services, traces, usage
from agents.review import selectors as review_selectors
from agents.review.chains import list_chain_trees
from agents.review.exports import ExportSpec
from agents.review.forms import ExportRangeForm, ReviewSettingsForm, TraceFilterForm, UsageForm
from agents.review.replay import build_timeline
from agents.review.selectors import (
    ReviewScope,
    get_review_scope,
    get_review_settings,
    get_review_task,
    require_staff,
)
from collab.lib.requests import AuthedRequest


def _context(scope: ReviewScope, **extra: object) -> dict[str, object]:
    return {"workspace": scope.workspace, "membership": scope.membership, **extra}


# --- home pages --------------------------------------------------------------------------------


@login_required
@require_GET
def site_home(request: AuthedRequest) -> HttpResponse:
    scope = require_staff(request.user)
    context = _context(
        scope,
        workspaces=review_selectors.list_workspaces_overview(),
        recent_turns=review_selectors.list_recent_turns(),
    )
    return render(request, "review/home.html", context)


@login_required
@require_GET
def workspace_home(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    scope = get_review_scope(request.user, workspace_id)
    assert scope.workspace is not None
    summary = metrics.workspace_metrics(scope.workspace.tasks.all())
    budget = usage.check_budget(scope.workspace)
    spent = budget.spent if budget.limit is not None else usage.spent_this_month(scope.workspace)
    return render(
        request,
        "review/home.html",
        _context(scope, metrics=summary, budget=budget, spent=spent),
    )


# --- traces ------------------------------------------------------------------------------------


def _render_traces(request: AuthedRequest, scope: ReviewScope) -> HttpResponse:
    choices = traces.filter_choices(scope)
    form = TraceFilterForm(
        request.GET or None, agents=choices["agents"], staff=scope.workspace is None
    )
    status = 200
    if form.is_bound and not form.is_valid():
        filters, before, view, status = traces.TraceFilter(), None, "calls", 400
    elif form.is_bound:
        filters, before = form.to_filter(), form.cleaned_data.get("before")
        view = form.cleaned_data.get("view") or "calls"
    else:
        filters, before, view = traces.TraceFilter(), None, "calls"
    lister = traces.list_turns if view == "turns" else traces.list_model_calls
    page = lister(scope=scope, filters=filters, before=before)
    query = request.GET.copy()
    query.pop("before", None)
    context = _context(scope, form=form, page=page, view=view, query=query.urlencode())
    return render(request, "review/traces.html", context, status=status)


@login_required
@require_GET
def site_traces(request: AuthedRequest) -> HttpResponse:
    return _render_traces(request, require_staff(request.user))


@login_required
@require_GET
def workspace_traces(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    return _render_traces(request, get_review_scope(request.user, workspace_id))


@login_required
@require_GET
def turn_detail(request: AuthedRequest, turn_id: int) -> HttpResponse:
    scope, trace = services.open_turn_trace(viewer=request.user, turn_id=turn_id)
    chains = (
        list_chain_trees(trace.turn.task_id, chain_id=trace.turn.chain_id)
        if trace.turn.chain_id is not None
        else []
    )
    return render(request, "review/turn_detail.html", _context(scope, trace=trace, chains=chains))


# --- replay and metrics ------------------------------------------------------------------------


@login_required
@require_GET
def task_replay(request: AuthedRequest, task_id: int) -> HttpResponse:
    task, scope = get_review_task(request.user, task_id)
    timeline = build_timeline(task, viewer=request.user)
    task_metrics = metrics.compute_metrics(task.workspace.tasks.filter(pk=task.pk))[task.pk]
    return render(
        request,
        "review/replay.html",
        _context(
            scope,
            task=task,
            timeline=timeline,
            metrics=task_metrics,
            chains=list_chain_trees(task.pk),
        ),
    )


# --- usage, budget and settings ----------------------------------------------------------------


def _render_usage(request: AuthedRequest, scope: ReviewScope) -> HttpResponse:
    form = UsageForm(request.GET)
    status = 200
    if not form.is_valid():
        status = 400
        today = timezone.now().date()
        since, until, by, metric = today - timedelta(days=29), today, "model", "cost"
    else:
        data = form.cleaned_data
        since, until, by, metric = data["since"], data["until"], data["by"], data["metric"]
    rows = usage.usage_by_day(scope=scope, since=since, until=until, by=by)
    # Every cost 0 (fake and local models have no price): a cost chart would be empty.
    free = bool(rows) and not any(row.cost for row in rows)
    if free and metric == "cost":
        metric = "tokens"
    chart = usage.usage_chart(rows, since=since, until=until, metric=metric)
    budget = usage.check_budget(scope.workspace) if scope.workspace is not None else None
    context = _context(
        scope,
        form=form,
        rows=rows,
        totals=usage.totals_by_key(rows),
        chart=chart,
        by=by,
        since=since,
        until=until,
        budget=budget,
        all_free=free,
    )
    return render(request, "review/usage.html", context, status=status)


@login_required
@require_GET
def site_usage(request: AuthedRequest) -> HttpResponse:
    return _render_usage(request, require_staff(request.user))


@login_required
@require_GET
def workspace_usage(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    return _render_usage(request, get_review_scope(request.user, workspace_id))


@login_required
@require_http_methods(["GET", "POST"])
def workspace_settings(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    scope = get_review_scope(request.user, workspace_id)
    assert scope.workspace is not None
    current = get_review_settings(scope.workspace)
    if request.method == "POST":
        form = ReviewSettingsForm(request.POST, instance=current)
        if form.is_valid():
            services.update_review_settings(actor=request.user, scope=scope, **form.cleaned_data)
            messages.success(request, "Review settings saved.")
            return redirect("review:workspace_settings", workspace_id=workspace_id)
        return render(request, "review/settings.html", _context(scope, form=form), status=400)
    form = ReviewSettingsForm(instance=current)
    return render(request, "review/settings.html", _context(scope, form=form))


# --- exports -----------------------------------------------------------------------------------


def _stream(lines: Iterator[str], *, content_type: str, filename: str) -> StreamingHttpResponse:
    response = StreamingHttpResponse(lines, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    response["X-Content-Type-Options"] = "nosniff"
    return response


def _range_or_400(request: AuthedRequest) -> ExportRangeForm:
    form = ExportRangeForm(request.GET)
    form.is_valid()
    return form


@login_required
@require_GET
def task_export(request: AuthedRequest, task_id: int) -> HttpResponseBase:
    task, scope = get_review_task(request.user, task_id)
    spec = ExportSpec(task_id=task.pk)
    lines = services.start_export(actor=request.user, scope=scope, spec=spec, fmt="jsonl")
    return _stream(lines, content_type="application/x-ndjson", filename=f"task-{task.pk}.jsonl")


def _range_export(request: AuthedRequest, scope: ReviewScope, fmt: str) -> HttpResponseBase:
    form = _range_or_400(request)
    if form.errors:
        return HttpResponse(form.errors.as_text(), status=400, content_type="text/plain")
    spec = ExportSpec(
        workspace_id=scope.workspace_id,
        since=form.cleaned_data.get("since"),
        until=form.cleaned_data.get("until"),
    )
    lines = services.start_export(actor=request.user, scope=scope, spec=spec, fmt=fmt)
    name = f"workspace-{scope.workspace_id}" if scope.workspace is not None else "all"
    if fmt == "csv":
        return _stream(lines, content_type="text/csv", filename=f"{name}-turns.csv")
    return _stream(lines, content_type="application/x-ndjson", filename=f"{name}.jsonl")


@login_required
@require_GET
def workspace_export(request: AuthedRequest, workspace_id: int) -> HttpResponseBase:
    return _range_export(request, get_review_scope(request.user, workspace_id), "jsonl")


@login_required
@require_GET
def workspace_turns_csv(request: AuthedRequest, workspace_id: int) -> HttpResponseBase:
    return _range_export(request, get_review_scope(request.user, workspace_id), "csv")


@login_required
@require_GET
def site_export(request: AuthedRequest) -> HttpResponseBase:
    return _range_export(request, require_staff(request.user), "jsonl")


@login_required
@require_GET
def site_turns_csv(request: AuthedRequest) -> HttpResponseBase:
    return _range_export(request, require_staff(request.user), "csv")
