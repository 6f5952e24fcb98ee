from __future__ import annotations

from django.apps import AppConfig


class MemoryConfig(AppConfig):
    name = "agents.memory"
    label = "memory"
    verbose_name = "Agent memory"
