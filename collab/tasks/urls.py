from __future__ import annotations

from django.urls import path

from collab.tasks import views

app_name = "tasks"

urlpatterns = [
    path("w/<int:workspace_id>/", views.task_list, name="list"),
    path("t/<int:task_id>/", views.task_detail, name="detail"),
    path("t/<int:task_id>/messages/", views.post_message, name="post_message"),
    path("t/<int:task_id>/messages/older/", views.older_messages, name="older_messages"),
    path("t/<int:task_id>/messages/newer/", views.newer_messages, name="newer_messages"),
    path("t/<int:task_id>/status/", views.set_status, name="status"),
    path("t/<int:task_id>/document/preview/", views.document_preview, name="document_preview"),
    path("t/<int:task_id>/document/history/", views.document_history, name="document_history"),
    path(
        "t/<int:task_id>/document/history/<int:version_id>/restore/",
        views.restore_version,
        name="restore_version",
    ),
]
