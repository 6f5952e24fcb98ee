from __future__ import annotations

from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "agents.evaluation"
    label = "evaluation"
    verbose_name = "Evaluation"
    default_auto_field = "django.db.models.BigAutoField"
