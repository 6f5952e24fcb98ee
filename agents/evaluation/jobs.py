"""Celery jobs of the evaluation app. Ids only; each calls one service."""

from __future__ import annotations

from celery import shared_task

from agents.evaluation import services


@shared_task(name=services.RUN_EVALUATION_JOB, acks_late=True, reject_on_worker_lost=True)
def run_evaluation_job(run_id: int) -> str:
    """Play one stored evaluation run (offline engine) and store its report. Idempotent: a run
    that already started is not played twice."""
    return services.execute_run(run_id=run_id)
