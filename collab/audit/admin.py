from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from collab.audit.models import AuditEvent


@admin.register(AuditEvent)
class AuditEventAdmin(admin.ModelAdmin):
    list_display = ["created_at", "actor_label", "action", "workspace", "target", "via", "ip"]
    list_filter = ["action", "via"]
    search_fields = ["actor_label", "target"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False
