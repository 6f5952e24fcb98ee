from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import include, path, re_path

from collab.api.api import api
from collab.api.errors import unknown_path


def home(request: HttpRequest) -> HttpResponse:
    """People who are logged in go to their workspaces; others learn what Collab is."""
    if request.user.is_authenticated:
        return redirect("workspaces:list")
    return render(request, "home.html")


urlpatterns = [
    path("", home, name="home"),
    path("accounts/", include("collab.accounts.urls")),
    path("", include("collab.workspaces.urls")),
    path("", include("collab.tasks.urls")),
    path("", include("collab.audit.urls")),
    path("memory/", include("agents.memory.urls")),
    path("evaluation/", include("agents.evaluation.urls")),
    path("", include("agents.urls")),
    path("review/", include("agents.review.urls")),
    path("api/", api.urls),
    re_path(r"^api/(?P<path>.*)$", unknown_path),  # after the API's own routes: a JSON 404
    path("admin/", admin.site.urls),
]
