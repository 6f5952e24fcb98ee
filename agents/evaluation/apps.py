from __future__ import annotations

from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "agents.evaluation"
    label = "evaluation"
    verbose_name = "Evaluation"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from agents import llm
        from agents.evaluation.chat_models import scribe_behaviour
        from agents.evaluation.signals import oracle_options
        from agents.policies_bridge import register_signal_provider

        register_signal_provider(oracle_options)
        # A fake model profile with model "eval_scribe" writes the chat into the document.
        llm.register_fake_behaviour("eval_scribe", scribe_behaviour)
