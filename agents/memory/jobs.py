"""Celery jobs of the memory app (ids-only arguments, idempotent, enqueued on commit)."""

from __future__ import annotations

from celery import shared_task
from django.db import OperationalError

from agents.llm import ModelConfigError, ModelError
from agents.memory import reflection


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError,),
    retry_backoff=True,
    retry_backoff_max=60,
    max_retries=5,
)
def reflect_conversation_job(task_id: int) -> str:
    """Debounced: every chat message schedules one run a quiet period later; only a run that
    finds the conversation quiet (or the task done) reads it, and each message is read once."""
    return reflection.reflect_conversation(task_id=task_id).outcome


def schedule_reflection(task_id: int, *, countdown: int | None = None) -> None:
    """Enqueue a reflection (call on commit; ``services.message_posted`` does)."""
    if countdown is None:
        countdown = int(reflection.quiet_period().total_seconds())
    reflect_conversation_job.apply_async(args=(task_id,), countdown=countdown)


@shared_task(
    acks_late=True,
    autoretry_for=(OperationalError, ModelError),
    retry_backoff=True,
    retry_backoff_max=300,
    max_retries=8,
)
def embed_items_job(item_ids: list[int]) -> int:
    """Embed created or edited items (ids only; a redelivery re-embeds nothing unchanged)."""
    from agents.memory import embeddings

    try:
        return embeddings.embed_items(item_ids)
    except ModelConfigError:
        return 0  # misconfigured: nothing to retry; `manage.py memory_embed` backfills later
