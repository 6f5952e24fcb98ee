"""Staff pages: list evaluation runs, start one, read its report, compare runs side by side."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_http_methods

from agents.evaluation import selectors, services
from agents.evaluation.forms import RunForm
from agents.evaluation.report import comparison_fragment, mode_banner, report_fragment
from collab.lib.requests import AuthedRequest

MAX_COMPARED = 6


@login_required
@require_http_methods(["GET", "POST"])
def run_list(request: AuthedRequest) -> HttpResponse:
    runs = selectors.list_runs(request.user)[:100]
    form = RunForm(request.POST or None)
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                run = services.create_run(user=request.user, **form.cleaned_data)
            except ValidationError as exc:
                for field, errors in exc.message_dict.items():
                    form.add_error(field if field in form.fields else None, errors)
            else:
                return redirect("evaluation:detail", run_id=run.pk)
        status = 400
    return render(request, "evaluation/run_list.html", {"runs": runs, "form": form}, status=status)


@login_required
def run_detail(request: AuthedRequest, run_id: int) -> HttpResponse:
    run = selectors.get_run(request.user, run_id)
    body = banner = ""
    if run.report:
        banner = mode_banner(run.report["config"])
        body = report_fragment(run.report)
    context = {"run": run, "banner": mark_safe(banner), "body": mark_safe(body)}  # noqa: S308 - our own escaped HTML and matplotlib SVG
    return render(request, "evaluation/run_detail.html", context)


@login_required
def run_report_json(request: AuthedRequest, run_id: int) -> JsonResponse:
    run = selectors.get_run(request.user, run_id)
    if not run.report:
        raise Http404("This run has no report yet.")
    return JsonResponse(run.report)


@login_required
def run_compare(request: AuthedRequest) -> HttpResponse:
    try:
        ids = [int(v) for v in request.GET.getlist("run")][:MAX_COMPARED]
    except ValueError:
        return HttpResponse("Runs are given by number.", status=400)
    runs = [r for r in selectors.get_runs(request.user, ids) if r.report]
    body = comparison_fragment([(f"#{r.pk}", r.report) for r in runs if r.report]) if runs else ""
    context = {"runs": runs, "body": mark_safe(body)}  # noqa: S308 - escaped HTML and matplotlib SVG
    return render(request, "evaluation/run_compare.html", context)
