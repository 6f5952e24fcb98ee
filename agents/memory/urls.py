from __future__ import annotations

from django.urls import path

from agents.memory import views

app_name = "memory"

urlpatterns = [
    path("", views.memory_page, name="page"),
    path("items/new/", views.create_item, name="create"),
    path("items/<int:item_id>/", views.item_detail, name="item"),
    path("items/<int:item_id>/edit/", views.edit_item, name="edit"),
    path("items/<int:item_id>/delete/", views.delete_item, name="delete"),
    path("items/<int:item_id>/pin/", views.pin_item, name="pin"),
    path("items/<int:item_id>/share/", views.share_item, name="share"),
    path("items/<int:item_id>/everywhere/", views.use_everywhere, name="everywhere"),
    path("suggestions/<int:candidate_id>/accept/", views.accept_candidate, name="accept"),
    path("suggestions/<int:candidate_id>/reject/", views.reject_candidate, name="reject"),
    path("settings/", views.update_settings, name="settings"),
    path("export.json", views.export_json, name="export"),
    path("import/", views.import_json, name="import"),
    path("forget-everything/", views.forget_everything, name="forget_everything"),
    path("people/<int:user_id>/", views.admin_read, name="admin_read"),
]
