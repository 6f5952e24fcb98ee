from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import Http404, HttpResponse
from django.shortcuts import render

from collab.audit.forms import AuditFilterForm
from collab.audit.selectors import AuditFilter, list_audit_events
from collab.lib.requests import AuthedRequest
from collab.workspaces.models import Membership
from collab.workspaces.selectors import get_membership

PAGE_SIZE = 50


def _render_log(request: AuthedRequest, membership: Membership | None) -> HttpResponse:
    workspace = membership.workspace if membership is not None else None
    form = AuditFilterForm(request.GET or None)
    if form.is_bound and not form.is_valid():
        filters = AuditFilter()
        status = 400
    else:
        filters = AuditFilter(**form.cleaned_data) if form.is_bound else AuditFilter()
        status = 200
    events = list_audit_events(workspace=workspace, filters=filters)
    page = Paginator(events, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    context = {
        "workspace": workspace,
        "membership": membership,
        "form": form,
        "page": page,
        "query": query.urlencode(),
    }
    return render(request, "audit/audit_log.html", context, status=status)


@login_required
def workspace_audit_log(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    membership = get_membership(request.user, workspace_id)
    if not membership.is_owner and not request.user.is_staff:
        raise PermissionDenied("Only owners read the audit log.")
    return _render_log(request, membership)


@login_required
def site_audit_log(request: AuthedRequest) -> HttpResponse:
    if not request.user.is_staff:
        raise Http404("No such page.")
    return _render_log(request, None)
