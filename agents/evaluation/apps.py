from __future__ import annotations

from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "agents.evaluation"
    label = "evaluation"
    verbose_name = "Evaluation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from agents.engine.policies_bridge import register_signal_provider
        from agents.evaluation.chat_models import scribe_behaviour
        from agents.evaluation.signals import oracle_options
        from agents.llm.fakes import register_fake_behaviour

        register_signal_provider(oracle_options)
        # A fake model profile with model "eval_scribe" writes the chat into the document.
        register_fake_behaviour("eval_scribe", scribe_behaviour)
