from __future__ import annotations

from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "collab.accounts"
    label = "accounts"

    def ready(self) -> None:
        # The receivers module imports the models (through services): only once apps are ready.
        from collab.accounts import receivers

        receivers.connect()
