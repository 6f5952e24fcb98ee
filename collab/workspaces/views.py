from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from collab.lib.requests import AuthedRequest
from collab.workspaces import selectors, services
from collab.workspaces.forms import InstructionsForm, InvitationForm, RoleForm, WorkspaceForm
from collab.workspaces.models import Membership


@login_required
def workspace_list(request: AuthedRequest) -> HttpResponse:
    form = WorkspaceForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            try:
                workspace = services.create_workspace(
                    owner=request.user,
                    name=form.cleaned_data["name"],
                    agent_name=form.cleaned_data["agent_name"],
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                return redirect("tasks:list", workspace_id=workspace.pk)
        status = 400
    else:
        status = 200
    workspaces = selectors.list_workspaces_for_user(request.user)
    return render(
        request,
        "workspaces/workspace_list.html",
        {"workspaces": workspaces, "form": form},
        status=status,
    )


def _members_page(
    request: AuthedRequest,
    membership: Membership,
    *,
    invitation_form: InvitationForm | None = None,
    new_invitation: services.NewInvitation | None = None,
    status: int = 200,
) -> HttpResponse:
    workspace = membership.workspace
    invite_url = None
    if new_invitation is not None:
        invite_url = request.build_absolute_uri(
            reverse("workspaces:invitation", args=[new_invitation.token])
        )
    context = {
        "workspace": workspace,
        "membership": membership,
        "members": selectors.list_members(workspace),
        "invitations": selectors.list_invitations(workspace) if membership.is_owner else [],
        "invitation_form": invitation_form
        or InvitationForm(initial={"days": settings.INVITATION_DEFAULT_DAYS}),
        "invite_url": invite_url,
        "roles": RoleForm.base_fields["role"].choices,  # type: ignore[attr-defined]
    }
    return render(request, "workspaces/members.html", context, status=status)


@login_required
def members(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    membership = selectors.get_membership(request.user, workspace_id)
    return _members_page(request, membership)


@login_required
def workspace_settings(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    """Workspace settings: every member reads the instructions agents get; owners change them."""
    membership = selectors.get_membership(request.user, workspace_id)
    workspace = membership.workspace
    status = 200
    if request.method == "POST":
        if not membership.is_owner:
            raise PermissionDenied("Only owners change the workspace instructions.")
        form = InstructionsForm(request.POST)
        if form.is_valid():
            try:
                services.update_workspace_instructions(
                    actor=membership, instructions=form.cleaned_data["instructions"]
                )
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                messages.success(request, "Workspace instructions saved.")
                return redirect("workspaces:settings", workspace_id=workspace_id)
        status = 400
    else:
        form = InstructionsForm(initial={"instructions": workspace.instructions})
    return render(
        request,
        "workspaces/settings.html",
        {"workspace": workspace, "membership": membership, "form": form},
        status=status,
    )


@login_required
@require_POST
def create_invitation(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    membership = selectors.get_membership(request.user, workspace_id)
    form = InvitationForm(request.POST)
    if not form.is_valid():
        return _members_page(request, membership, invitation_form=form, status=400)
    try:
        new = services.create_invitation(actor=membership, **form.cleaned_data)
    except ValidationError as exc:
        form.add_error(None, exc)
        return _members_page(request, membership, invitation_form=form, status=400)
    return _members_page(request, membership, new_invitation=new)


@login_required
@require_POST
def revoke_invitation(
    request: AuthedRequest, workspace_id: int, invitation_id: int
) -> HttpResponse:
    membership = selectors.get_membership(request.user, workspace_id)
    invitation = get_object_or_404(membership.workspace.invitations, pk=invitation_id)
    services.revoke_invitation(actor=membership, invitation=invitation)
    messages.success(request, "Invitation revoked: its link no longer works.")
    return redirect("workspaces:members", workspace_id=workspace_id)


@login_required
@require_POST
def change_role(request: AuthedRequest, workspace_id: int, member_id: int) -> HttpResponse:
    actor = selectors.get_membership(request.user, workspace_id)
    target = get_object_or_404(actor.workspace.memberships, pk=member_id)
    form = RoleForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Choose owner, editor or viewer.")
        return _members_page(request, actor, status=400)
    try:
        services.change_role(actor=actor, membership=target, role=form.cleaned_data["role"])
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return _members_page(request, actor, status=400)
    messages.success(request, f"{target.user} is now {target.get_role_display().lower()}.")
    return redirect("workspaces:members", workspace_id=workspace_id)


@login_required
@require_POST
def remove_member(request: AuthedRequest, workspace_id: int, member_id: int) -> HttpResponse:
    actor = selectors.get_membership(request.user, workspace_id)
    target = get_object_or_404(actor.workspace.memberships.select_related("user"), pk=member_id)
    try:
        services.remove_member(actor=actor, membership=target)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return _members_page(request, actor, status=400)
    if target.pk == actor.pk:
        messages.success(request, f"You left {actor.workspace}.")
        return redirect("workspaces:list")
    messages.success(request, f"{target.user} was removed.")
    return redirect("workspaces:members", workspace_id=workspace_id)


@login_required
@require_POST
def leave(request: AuthedRequest, workspace_id: int) -> HttpResponse:
    membership = selectors.get_membership(request.user, workspace_id)
    try:
        services.leave_workspace(membership=membership)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
        return _members_page(request, membership, status=400)
    messages.success(request, f"You left {membership.workspace}.")
    return redirect("workspaces:list")


def invitation(request: AuthedRequest, token: str) -> HttpResponse:
    """Show an invitation and accept it. Signed-out visitors are sent to log in or sign up."""
    found = services.find_invitation(token)
    if found is None:
        raise Http404("This invitation link is not valid.")
    if not request.user.is_authenticated:
        # Say what the link is for, then sign up or log in and come back here to join.
        return render(
            request, "workspaces/invitation.html", {"invitation": found, "next": request.path}
        )
    if request.method == "POST":
        try:
            membership = services.accept_invitation(user=request.user, token=token)
        except ValidationError as exc:
            return render(
                request,
                "workspaces/invitation.html",
                {"invitation": found, "error": " ".join(exc.messages)},
                status=400,
            )
        messages.success(request, f"Welcome to {membership.workspace}.")
        return redirect("tasks:list", workspace_id=membership.workspace_id)
    return render(request, "workspaces/invitation.html", {"invitation": found})
