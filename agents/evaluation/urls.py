from __future__ import annotations

from django.urls import path

from agents.evaluation import views

app_name = "evaluation"

urlpatterns = [
    path("", views.run_list, name="list"),
    path("compare/", views.run_compare, name="compare"),
    path("<int:run_id>/", views.run_detail, name="detail"),
    path("<int:run_id>/report.json", views.run_report_json, name="report-json"),
]
