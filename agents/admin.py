from __future__ import annotations

from django import forms
from django.contrib import admin
from django.http import HttpRequest

from agents.llm.endpoints import validate_base_url
from agents.models import (
    Action,
    Agent,
    AgentNote,
    Chain,
    Feedback,
    Hop,
    ModelCall,
    ModelProfile,
    PolicyState,
    Question,
    Suggestion,
    Turn,
)


class ModelProfileAdminForm(forms.ModelForm):
    """The admin's form checks base URLs as the Models page does (agents/llm/endpoints.py)."""

    base_url = forms.URLField(required=False, assume_scheme="http")

    class Meta:
        model = ModelProfile
        fields = [
            "name",
            "provider",
            "model",
            "base_url",
            "api_key_env",
            "temperature",
            "max_tokens",
            "timeout_seconds",
            "price_in_per_1k",
            "price_out_per_1k",
            "is_default",
        ]

    def clean_base_url(self) -> str:
        return validate_base_url(str(self.cleaned_data.get("base_url") or ""))


@admin.register(ModelProfile)
class ModelProfileAdmin(admin.ModelAdmin):
    form = ModelProfileAdminForm
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
    raw_id_fields = ["agent", "task", "requested_by", "parent", "chain"]
    inlines = [ActionInline, ModelCallInline]


class HopInline(admin.TabularInline):
    model = Hop
    extra = 0
    fields = ["index", "kind", "from_agent", "to_agent", "from_turn", "to_turn", "text"]
    raw_id_fields = ["from_agent", "to_agent", "from_turn", "to_turn", "message"]


@admin.register(Chain)
class ChainAdmin(admin.ModelAdmin):
    """Chains of agents addressing agents (issue 30): status, the guard that stopped one."""

    list_display = ["id", "task", "status", "hop_count", "budget", "guard", "created_at"]
    list_filter = ["status", "guard"]
    search_fields = ["task__title"]
    raw_id_fields = ["task", "root_turn", "notice"]
    inlines = [HopInline]


@admin.register(ModelCall)
class ModelCallAdmin(admin.ModelAdmin):
    list_display = ["id", "turn", "provider", "model", "tokens_in", "tokens_out", "latency_ms"]
    list_filter = ["provider"]
    raw_id_fields = ["turn", "agent"]


for model in (Suggestion, Question, AgentNote):
    admin.site.register(model, raw_id_fields=["task", "agent", "turn"])


@admin.register(Feedback)
class FeedbackAdmin(admin.ModelAdmin):
    """Read-only: feedback is people's own; it changes only through record_feedback."""

    list_display = [
        "id",
        "user",
        "task",
        "target_kind",
        "rating",
        "unnecessary_question",
        "learned_reward",
        "updated_at",
    ]
    list_filter = ["target_kind", "rating", "unnecessary_question"]
    search_fields = ["user__username", "task__title", "comment"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(PolicyState)
class PolicyStateAdmin(admin.ModelAdmin):
    """Deleting a row resets that learning policy (it starts afresh on the next turn)."""

    list_display = ["id", "workspace", "user", "policy_name", "decisions", "rewards", "updated_at"]
    list_filter = ["policy_name"]
    raw_id_fields = ["workspace", "user"]
    readonly_fields = ["state", "decisions", "rewards"]
