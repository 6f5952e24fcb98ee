from __future__ import annotations

from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.forms import Form
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from collab.accounts.forms import ApiTokenForm, SignUpForm
from collab.accounts.models import ApiToken
from collab.accounts.services import create_api_token, revoke_api_token
from collab.lib.requests import AuthedRequest


class _BadRequestOnInvalid:
    """Class-based auth views answer 400 (not 200) when their form is invalid."""

    def form_invalid(self, form: Form) -> HttpResponse:
        response: HttpResponse = super().form_invalid(form)  # type: ignore[misc]
        response.status_code = 400
        return response


class LoginView(_BadRequestOnInvalid, auth_views.LoginView):
    template_name = "accounts/login.html"


class PasswordChangeView(_BadRequestOnInvalid, auth_views.PasswordChangeView):
    template_name = "accounts/password_change.html"


def _safe_next(request: AuthedRequest) -> str | None:
    target = request.POST.get("next") or request.GET.get("next")
    if target and url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        return target
    return None


def signup(request: AuthedRequest) -> HttpResponse:
    if request.user.is_authenticated:
        return redirect("workspaces:list")
    form = SignUpForm(request.POST or None)
    if request.method == "POST":
        if form.is_valid():
            user = form.save()
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return redirect(_safe_next(request) or "workspaces:list")
        return render(
            request, "accounts/signup.html", {"form": form, "next": _safe_next(request)}, status=400
        )
    return render(request, "accounts/signup.html", {"form": form, "next": _safe_next(request)})


@login_required
def settings_page(request: AuthedRequest) -> HttpResponse:
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
    tokens = ApiToken.objects.filter(user=request.user).order_by("-created_at")
    return render(
        request,
        "accounts/settings.html",
        {"form": form, "tokens": tokens, "new_token": new_token},
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
