from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.urls import Resolver404, resolve, reverse_lazy
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from collab.accounts import throttle
from collab.accounts.forms import ApiTokenForm, LoginForm, ProfileForm, SignUpForm
from collab.accounts.middleware import SESSION_KEY, remember_time_zone
from collab.accounts.models import ApiToken
from collab.accounts.selectors import list_api_tokens
from collab.accounts.services import (
    NewApiToken,
    create_api_token,
    revoke_api_token,
    time_zone_of,
    update_profile,
)
from collab.lib.requests import AuthedRequest
from collab.workspaces.models import Invitation
from collab.workspaces.services import find_invitation


class _BadRequestOnInvalid:
    """Class-based auth views answer 400 (not 200) when their form is invalid."""

    def form_invalid(self, form: Form) -> HttpResponse:
        response: HttpResponse = super().form_invalid(form)  # type: ignore[misc]
        response.status_code = 400
        return response


class LoginView(_BadRequestOnInvalid, auth_views.LoginView):
    template_name = "accounts/login.html"
    authentication_form = LoginForm


class PasswordChangeView(_BadRequestOnInvalid, auth_views.PasswordChangeView):
    template_name = "accounts/password_change.html"


class PasswordResetView(_BadRequestOnInvalid, auth_views.PasswordResetView):
    """Mails a reset link to the accounts with that e-mail address; says the same whether or
    not there is one (the console backend prints the mail unless SMTP is configured)."""

    template_name = "accounts/password_reset.html"
    email_template_name = "accounts/password_reset_email.txt"
    subject_template_name = "accounts/password_reset_subject.txt"
    success_url = reverse_lazy("accounts:password_reset_done")


class PasswordResetConfirmView(_BadRequestOnInvalid, auth_views.PasswordResetConfirmView):
    template_name = "accounts/password_reset_confirm.html"
    success_url = reverse_lazy("accounts:password_reset_complete")


def _safe_next(request: AuthedRequest) -> str | None:
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


def _invitation_in(target: str | None) -> Invitation | None:
    """The usable invitation that ``next`` leads back to, if it is an invitation link."""
    if not target:
        return None
    try:
        match = resolve(target.split("?", 1)[0])
    except Resolver404:
        return None
    if match.view_name != "workspaces:invitation":
        return None
    found = find_invitation(match.kwargs["token"])
    return found if found is not None and found.is_usable else None


def signup(request: AuthedRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("workspaces:list")
    form = SignUpForm(request.POST or None)
    if request.method == "POST":
        try:
            throttle.check_allowed(request, "signup")
        except throttle.TooManyAttempts as exc:
            return render(request, "accounts/locked.html", {"message": str(exc)}, status=429)
        if form.is_valid():
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect(_safe_next(request) or "workspaces:list")
        if form.username_taken:
            throttle.record_failure(request, "signup")
        status = 400
    else:
        status = 200
    target = _safe_next(request)
    context = {"form": form, "next": target, "invitation": _invitation_in(target)}
    return render(request, "accounts/signup.html", context, status=status)


@login_required
def settings_page(request: AuthedRequest) -> HttpResponse:
    is_profile = request.method == "POST" and request.POST.get("form") == "profile"
    profile = ProfileForm(
        request.POST if is_profile else None,
        instance=request.user,
        initial={"time_zone": time_zone_of(request.user)},
    )
    if is_profile:
        if profile.is_valid():
            time_zone = profile.cleaned_data["time_zone"]
            update_profile(
                user=request.user,
                display_name=profile.cleaned_data["first_name"],
                email=profile.cleaned_data["email"],
                time_zone=time_zone,
            )
            remember_time_zone(request, time_zone)
            messages.success(request, "Profile saved.")
            return redirect("accounts:settings")
        return _settings(request, ApiTokenForm(), profile, None, status=400)
    form = ApiTokenForm(request.POST or None)
    new_token = None
    status = 200
    if request.method == "POST":
        if form.is_valid():
            try:
                new_token = create_api_token(user=request.user, name=form.cleaned_data["name"])
            except ValidationError as exc:
                form.add_error(None, exc)
                status = 400
            else:
                form = ApiTokenForm()
        else:
            status = 400
    return _settings(request, form, profile, new_token, status=status)


def _settings(
    request: AuthedRequest,
    form: ApiTokenForm,
    profile: ProfileForm,
    new_token: NewApiToken | None,
    *,
    status: int,
) -> HttpResponse:
    tokens = list_api_tokens(request.user)
    return render(
        request,
        "accounts/settings.html",
        {
            "form": form,
            "profile_form": profile,
            "tokens": tokens,
            "new_token": new_token,
            "current_time_zone": request.session.get(SESSION_KEY, ""),
        },
        status=status,
    )


@login_required
@require_POST
def revoke_token(request: AuthedRequest, token_id: int) -> HttpResponse:
    try:
        revoke_api_token(user=request.user, token_id=token_id)
    except ApiToken.DoesNotExist:
        raise Http404("No such token.") from None
    messages.success(request, "Token revoked.")
    return redirect("accounts:settings")
