"""Celery jobs of the memory app (ids-only arguments, idempotent, enqueued on commit by name:
``services.commands.REFLECT_JOB``, ``embeddings.EMBED_JOB``; see ``agents.memory.queue``)."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from agents.llm import ModelConfigError, ModelError
from agents.memory import embeddings, reflection


@shared_task(
    name="memory.reflect_conversation",
    acks_late=True,
    autoretry_for=(OperationalError, ModelError),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=5,
)
def reflect_conversation_job(task_id: int) -> str:
    """Debounced: every chat message schedules one run a quiet period later; only a run that
    finds the conversation quiet (or the task done) reads it, and each message is read once."""
    return reflection.reflect_conversation(task_id=task_id).outcome


@shared_task(
    name="memory.embed_items",
    acks_late=True,
    autoretry_for=(OperationalError, ModelError),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=8,
)
def embed_items_job(item_ids: list[int]) -> int:
    """Embed created or edited items (ids only; a redelivery re-embeds nothing unchanged)."""
    try:
        return embeddings.embed_items(item_ids)
    except ModelConfigError:
        return 0  # misconfigured: nothing to retry; `manage.py memory_embed` backfills later
