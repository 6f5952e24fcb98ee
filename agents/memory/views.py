"""The "What agents remember about me" page and its actions (thin: selectors and services)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_POST

from agents.memory import selectors, services
from agents.memory.forms import (
    ForgetEverythingForm,
    ImportForm,
    ItemForm,
    NewItemForm,
    SettingsForm,
)
from agents.memory.models import Scope
from collab.lib.requests import AuthedRequest
from collab.lib.responses import run_service
from collab.workspaces.selectors import get_membership


def _page(
    request: AuthedRequest,
    *,
    status: int = 200,
    errors: list[str] | None = None,
    new_form: NewItemForm | None = None,
    import_form: ImportForm | None = None,
    forget_form: ForgetEverythingForm | None = None,
) -> HttpResponse:
    user = request.user
    query = request.GET.get("q", "")[:200]
    settings = selectors.get_settings(user)
    context: dict[str, Any] = {
        "sections": selectors.list_sections(user, query=query),
        "query": query,
        "candidates": selectors.list_pending_candidates(user),
        "memory_settings": settings,
        "settings_form": SettingsForm(
            initial={
                "enabled": settings.enabled,
                "review_mode": settings.review_mode,
                "admin_access_allowed": settings.admin_access_allowed,
            }
        ),
        "new_form": new_form or NewItemForm(),
        "import_form": import_form or ImportForm(),
        "forget_form": forget_form or ForgetEverythingForm(),
        "errors": errors or [],
        "scopes": Scope,
    }
    if request.htmx and request.method == "GET":
        return render(request, "memory/memory_page.html#memory-sections", context)
    return render(request, "memory/memory_page.html", context, status=status)


@login_required
@require_GET
def memory_page(request: AuthedRequest) -> HttpResponse:
    return _page(request)


def _errors(exc: ValidationError) -> list[str]:
    return [str(m) for m in exc.messages]


def _back(request: AuthedRequest, said: str = "") -> Callable[[], HttpResponse]:
    """Back to the memory page, saying ``said`` there (what a done action answers)."""

    def done() -> HttpResponse:
        if said:
            messages.success(request, said)
        return redirect("memory:page")

    return done


@login_required
@require_POST
def create_item(request: AuthedRequest) -> HttpResponse:
    form = NewItemForm(request.POST)
    if not form.is_valid():
        return _page(request, status=400, new_form=form)
    data = form.cleaned_data
    scope, workspace_id = data["where"]
    workspace = (
        None if workspace_id is None else get_membership(request.user, workspace_id).workspace
    )
    try:
        services.create_item(
            user=request.user,
            text=data["text"],
            kind=data["kind"],
            key=data["key"],
            value=data["value"],
            scope=scope,
            workspace=workspace,
        )
    except ValidationError as exc:
        return _page(request, status=400, errors=_errors(exc), new_form=form)
    messages.success(request, "Remembered.")
    return redirect("memory:page")


@login_required
@require_GET
def item_detail(request: AuthedRequest, item_id: int) -> HttpResponse:
    item = selectors.get_item_for_user(request.user, item_id)
    form = ItemForm(
        initial={"text": item.text, "kind": item.kind, "key": item.key, "value": item.value}
    )
    return render(
        request,
        "memory/item_detail.html",
        {"item": item, "history": selectors.list_history(item), "form": form},
    )


@login_required
@require_POST
def edit_item(request: AuthedRequest, item_id: int) -> HttpResponse:
    item = selectors.get_item_for_user(request.user, item_id)
    form = ItemForm(request.POST)
    if form.is_valid():
        try:
            services.edit_item(user=request.user, item=item, **form.cleaned_data)
        except ValidationError as exc:
            form.add_error(None, exc)
        else:
            messages.success(request, "Saved.")
            return redirect("memory:page")
    return render(
        request,
        "memory/item_detail.html",
        {"item": item, "history": selectors.list_history(item), "form": form},
        status=400,
    )


@login_required
@require_POST
def delete_item(request: AuthedRequest, item_id: int) -> HttpResponse:
    item = selectors.get_item_for_user(request.user, item_id)
    return run_service(
        lambda: services.delete_item(user=request.user, item=item),
        _back(request, "Deleted: agents will no longer use it."),
    )


@login_required
@require_POST
def pin_item(request: AuthedRequest, item_id: int) -> HttpResponse:
    item = selectors.get_item_for_user(request.user, item_id)
    pinned = request.POST.get("pinned", "1") == "1"
    return run_service(
        lambda: services.set_pinned(user=request.user, item=item, pinned=pinned), _back(request)
    )


@login_required
@require_POST
def share_item(request: AuthedRequest, item_id: int) -> HttpResponse:
    """The per-item "share with my workspaces" switch (off by default)."""
    item = selectors.get_item_for_user(request.user, item_id)
    shared = request.POST.get("shared", "1") == "1"
    return run_service(
        lambda: services.set_shared(user=request.user, item=item, shared=shared),
        _back(
            request,
            "Shared with your workspaces: agents may use it in replies others read."
            if shared
            else "No longer shared: agents use it only when you ask them.",
        ),
    )


@login_required
@require_POST
def use_everywhere(request: AuthedRequest, item_id: int) -> HttpResponse:
    """Widen an item kept for one workspace (what agents notice) to everywhere."""
    item = selectors.get_item_for_user(request.user, item_id)
    return run_service(
        lambda: services.use_everywhere(user=request.user, item=item),
        _back(request, "Now used everywhere."),
    )


@login_required
@require_POST
def accept_candidate(request: AuthedRequest, candidate_id: int) -> HttpResponse:
    candidate = selectors.get_candidate_for_user(request.user, candidate_id)
    return run_service(
        lambda: services.accept_candidate(user=request.user, candidate=candidate),
        _back(request, "Accepted."),
    )


@login_required
@require_POST
def reject_candidate(request: AuthedRequest, candidate_id: int) -> HttpResponse:
    candidate = selectors.get_candidate_for_user(request.user, candidate_id)
    return run_service(
        lambda: services.reject_candidate(user=request.user, candidate=candidate),
        _back(request, "Rejected: it will not be remembered."),
    )


@login_required
@require_POST
def update_settings(request: AuthedRequest) -> HttpResponse:
    form = SettingsForm(request.POST)
    if not form.is_valid():
        return _page(request, status=400, errors=["Choose how suggestions are handled."])
    services.update_settings(user=request.user, **form.cleaned_data)
    messages.success(
        request,
        "Memory is on."
        if form.cleaned_data["enabled"]
        else "Memory is off: nothing is remembered or used until you switch it back on.",
    )
    return redirect("memory:page")


@login_required
@require_GET
def export_json(request: AuthedRequest) -> HttpResponse:
    data = selectors.export_memory(request.user)
    services.record_export(user=request.user, items=len(data["items"]))
    response = JsonResponse(data, json_dumps_params={"indent": 2, "ensure_ascii": False})
    response["Content-Disposition"] = 'attachment; filename="collab-memory.json"'
    return response


@login_required
@require_POST
def import_json(request: AuthedRequest) -> HttpResponse:
    form = ImportForm(request.POST, request.FILES)
    if not form.is_valid():
        return _page(request, status=400, import_form=form)
    try:
        counts = services.import_memory(user=request.user, raw=form.cleaned_data["file"])
    except ValidationError as exc:
        return _page(request, status=400, errors=["The file was not imported.", *_errors(exc)])
    messages.success(
        request,
        f"Imported: {counts.get('added', 0)} new, {counts.get('superseded', 0)} replacing "
        f"older ones, {counts.get('kept', 0)} already known.",
    )
    return redirect("memory:page")


@login_required
@require_POST
def forget_everything(request: AuthedRequest) -> HttpResponse:
    form = ForgetEverythingForm(request.POST)
    if not form.is_valid():
        return _page(request, status=400, forget_form=form)
    counts = services.forget_everything(user=request.user)
    messages.success(request, f"Forgot everything: {counts['items']} memories erased.")
    return redirect("memory:page")


@login_required
@require_GET
def admin_read(request: AuthedRequest, user_id: int) -> HttpResponse:
    """Staff only, and only if that person allowed it; every read is audited."""
    subject = get_user_model().objects.filter(pk=user_id).first()
    if subject is None or not request.user.is_staff or subject.pk == request.user.pk:
        raise Http404("No such person.")
    try:
        services.record_admin_read(admin=request.user, subject=subject)
    except PermissionDenied:
        raise Http404("No such person.") from None
    data = selectors.export_memory(subject)
    return render(
        request,
        "memory/admin_read.html",
        {"subject": subject, "items": data["items"], "raw": json.dumps(data, indent=2)},
    )
