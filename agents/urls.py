from __future__ import annotations

from django.urls import path

from agents import views

app_name = "agents"

urlpatterns = [
    path("models/", views.models_page, name="models"),
    path("models/<int:profile_id>/", views.edit_model, name="edit_model"),
    path("models/<int:profile_id>/test/", views.test_model, name="test_model"),
    path("models/<int:profile_id>/default/", views.make_default_model, name="default_model"),
    path("w/<int:workspace_id>/agents/", views.manage_agents, name="manage"),
    path("w/<int:workspace_id>/agents/<int:agent_id>/", views.edit_agent, name="edit"),
    path(
        "w/<int:workspace_id>/agents/outside/",
        views.create_outside_agent,
        name="create_outside",
    ),
    path("t/<int:task_id>/agents/add/", views.add_to_task, name="add_to_task"),
    path("t/<int:task_id>/agents/<int:agent_id>/ask/", views.ask, name="ask"),
    path("t/<int:task_id>/turns/<int:turn_id>/stop/", views.stop, name="stop"),
    path("t/<int:task_id>/suggestions/<int:suggestion_id>/accept/", views.accept, name="accept"),
    path("t/<int:task_id>/suggestions/<int:suggestion_id>/reject/", views.reject, name="reject"),
    path("t/<int:task_id>/questions/<int:question_id>/answer/", views.answer, name="answer"),
    path(
        "t/<int:task_id>/assumptions/<int:assumption_id>/undo/",
        views.undo_assumption,
        name="undo_assumption",
    ),
    path("t/<int:task_id>/plan/<int:step_id>/tick/", views.plan_tick, name="plan_tick"),
    path("t/<int:task_id>/plan/<int:step_id>/assign/", views.plan_assign, name="plan_assign"),
    path("t/<int:task_id>/edits/<int:action_id>/undo/", views.undo_edit, name="undo_edit"),
    path(
        "t/<int:task_id>/feedback/<slug:kind>/<int:target_id>/",
        views.feedback,
        name="feedback",
    ),
]
