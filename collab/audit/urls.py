from __future__ import annotations

from django.urls import path

from collab.audit import views

app_name = "audit"

urlpatterns = [
    path("w/<int:workspace_id>/audit/", views.workspace_audit_log, name="workspace"),
    path("audit/", views.site_audit_log, name="site"),
]
