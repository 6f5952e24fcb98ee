from __future__ import annotations

from django.urls import path

from collab.workspaces import views

app_name = "workspaces"

urlpatterns = [
    path("w/", views.workspace_list, name="list"),
    path("w/<int:workspace_id>/members/", views.members, name="members"),
    path("w/<int:workspace_id>/settings/", views.workspace_settings, name="settings"),
    path("w/<int:workspace_id>/members/<int:member_id>/role/", views.change_role, name="role"),
    path(
        "w/<int:workspace_id>/members/<int:member_id>/remove/",
        views.remove_member,
        name="remove",
    ),
    path("w/<int:workspace_id>/leave/", views.leave, name="leave"),
    path("w/<int:workspace_id>/invitations/", views.create_invitation, name="invite"),
    path(
        "w/<int:workspace_id>/invitations/<int:invitation_id>/revoke/",
        views.revoke_invitation,
        name="revoke_invitation",
    ),
    path("invite/<str:token>/", views.invitation, name="invitation"),
]
