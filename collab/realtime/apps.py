from __future__ import annotations

from django.apps import AppConfig


class RealtimeConfig(AppConfig):
    name = "collab.realtime"
    label = "realtime"
