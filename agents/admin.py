from __future__ import annotations

from django.contrib import admin

from agents.models import (
    Action,
    Agent,
    AgentNote,
    ModelCall,
    ModelProfile,
    Question,
    Suggestion,
    Turn,
)


@admin.register(ModelProfile)
class ModelProfileAdmin(admin.ModelAdmin):
    list_display = ["name", "provider", "model", "base_url", "api_key_env", "max_tokens"]
    list_filter = ["provider"]
    search_fields = ["name", "model"]


@admin.register(Agent)
class AgentAdmin(admin.ModelAdmin):
    list_display = ["name", "workspace", "model_profile", "policy_name", "mode", "is_active"]
    list_filter = ["mode", "is_active"]
    search_fields = ["name", "workspace__name"]
    raw_id_fields = ["workspace", "created_by"]
    filter_horizontal = ["tasks"]


class ActionInline(admin.TabularInline):
    model = Action
    extra = 0
    readonly_fields = ["index", "kind", "payload", "idempotency_key", "status", "result", "detail"]
    can_delete = False


class ModelCallInline(admin.StackedInline):
    model = ModelCall
    extra = 0
    readonly_fields = [
        "provider",
        "model",
        "messages",
        "response",
        "tokens_in",
        "tokens_out",
        "latency_ms",
        "cost",
        "error",
    ]
    exclude = ["agent"]
    can_delete = False


@admin.register(Turn)
class TurnAdmin(admin.ModelAdmin):
    list_display = ["id", "agent", "task", "trigger", "status", "model_label", "created_at"]
    list_filter = ["status", "trigger", "provider"]
    search_fields = ["agent__name", "task__title"]
    raw_id_fields = ["agent", "task", "requested_by"]
    inlines = [ActionInline, ModelCallInline]


@admin.register(ModelCall)
class ModelCallAdmin(admin.ModelAdmin):
    list_display = ["id", "turn", "provider", "model", "tokens_in", "tokens_out", "latency_ms"]
    list_filter = ["provider"]
    raw_id_fields = ["turn", "agent"]


for model in (Suggestion, Question, AgentNote):
    admin.site.register(model, raw_id_fields=["task", "agent", "turn"])
