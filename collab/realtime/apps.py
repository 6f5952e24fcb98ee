from __future__ import annotations

from django.apps import AppConfig


class RealtimeConfig(AppConfig):
    name = "collab.realtime"
    label = "realtime"

    def ready(self) -> None:
        # The receivers module imports the models (through broadcast): only once apps are ready.
        from collab.realtime import receivers

        receivers.connect()
