from __future__ import annotations

from django.urls import path

from agents.review import views

app_name = "review"

urlpatterns = [
    path("", views.site_home, name="site_home"),
    path("traces/", views.site_traces, name="site_traces"),
    path("usage/", views.site_usage, name="site_usage"),
    path("export.jsonl", views.site_export, name="site_export"),
    path("turns.csv", views.site_turns_csv, name="site_turns_csv"),
    path("turns/<int:turn_id>/", views.turn_detail, name="turn"),
    path("tasks/<int:task_id>/", views.task_replay, name="replay"),
    path("tasks/<int:task_id>/export.jsonl", views.task_export, name="task_export"),
    path("w/<int:workspace_id>/", views.workspace_home, name="workspace_home"),
    path("w/<int:workspace_id>/traces/", views.workspace_traces, name="workspace_traces"),
    path("w/<int:workspace_id>/usage/", views.workspace_usage, name="workspace_usage"),
    path("w/<int:workspace_id>/settings/", views.workspace_settings, name="workspace_settings"),
    path("w/<int:workspace_id>/export.jsonl", views.workspace_export, name="workspace_export"),
    path("w/<int:workspace_id>/turns.csv", views.workspace_turns_csv, name="workspace_turns_csv"),
]
