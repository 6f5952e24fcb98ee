from __future__ import annotations

from django.apps import AppConfig


class AgentsConfig(AppConfig):
    name = "agents"
    label = "agents"
    verbose_name = "Agents"

    def ready(self) -> None:
        # The platform (collab) never imports agents: it calls its hooks, filled in here.
        from django.db.models.signals import post_migrate

        from agents.engine import warmup
        from agents.engine.producers.installed import register_all as register_producers
        from agents.profiles import bootstrap_after_migrate
        from agents.services import hooks

        hooks.register()
        # The turn's producers (agents/engine/producers/installed.py): the model producer takes
        # every turn that no other registered producer accepts.
        register_producers()
        # Models named by the environment (OPENAI_API_KEY, ...) are set up at start-up.
        post_migrate.connect(bootstrap_after_migrate, sender=self)
        # A starting worker loads the local models its turns use (agents/engine/warmup.py).
        warmup.connect()
