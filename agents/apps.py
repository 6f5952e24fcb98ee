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
        from agents.engine.producers import register_producer
        from agents.engine.producers.model import ModelProducer
        from agents.profiles import bootstrap_after_migrate
        from agents.services import hooks

        hooks.register()
        # The composition root of the turn's producers (agents/engine/producers/__init__.py):
        # the model producer takes every turn that no other registered producer accepts.
        register_producer(ModelProducer(), fallback=True)
        # Models named by the environment (OPENAI_API_KEY, ...) are set up at start-up.
        post_migrate.connect(bootstrap_after_migrate, sender=self)
        # A starting worker loads the local models its turns use (agents/engine/warmup.py).
        warmup.connect()
