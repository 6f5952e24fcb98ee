from __future__ import annotations

from django.contrib import admin

from agents.evaluation.models import EvaluationRun


@admin.register(EvaluationRun)
class EvaluationRunAdmin(admin.ModelAdmin):
    list_display = ("id", "scenarios", "mode", "memory", "status", "created_by", "created_at")
    list_filter = ("status", "mode")
    readonly_fields = ("report", "error", "started_at", "finished_at")
