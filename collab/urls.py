from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.urls import include, path

from collab.api.api import api


def home(request: HttpRequest) -> HttpResponse:
    return redirect("workspaces:list" if request.user.is_authenticated else "accounts:login")


urlpatterns = [
    path("", home, name="home"),
    path("accounts/", include("collab.accounts.urls")),
    path("", include("collab.workspaces.urls")),
    path("", include("collab.tasks.urls")),
    path("", include("collab.audit.urls")),
    path("memory/", include("agents.memory.urls")),
    path("evaluation/", include("agents.evaluation.urls")),
    path("", include("agents.urls")),
    path("review/", include("collab.review.urls")),
    path("api/", api.urls),
    path("admin/", admin.site.urls),
]
