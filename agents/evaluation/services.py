"""Evaluation runs started from the app: create (enqueue on commit) and execute (in the job)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from agents.evaluation.chat_models import chat_model_for_profile, profile_endpoint
from agents.evaluation.models import EvaluationRun, RunStatus
from agents.evaluation.report import build_report
from agents.evaluation.runner import RunConfig, run_offline, total_episodes
from agents.evaluation.scenario import ScenarioError, load_scenarios
from agents.outbox import enqueue
from agents.policies import registered_names

log = logging.getLogger(__name__)

MEMORY = {"on": (True,), "off": (False,), "both": (True, False)}
# The job that plays a run (agents/evaluation/jobs.py), sent by name on commit.
RUN_EVALUATION_JOB = "agents.evaluation.jobs.run_evaluation_job"
PROGRESS_EVERY = 10


@transaction.atomic
def create_run(
    *,
    user: User,
    scenarios: str,
    policies: Sequence[str],
    mode: str,
    memory: str = "both",
    model_profile: str = "",
    seeds: int = 1,
    sessions: int | None = None,
    note: str = "",
) -> EvaluationRun:
    """Store a queued run and enqueue `run_evaluation_job` once the transaction commits."""
    if not user.is_staff:
        raise PermissionDenied("Only staff start evaluation runs.")
    unknown = [p for p in policies if p not in registered_names()]
    if unknown or not policies:
        raise ValidationError({"policies": f"Unknown policies: {', '.join(unknown) or 'none'}."})
    try:
        scenario_set = load_scenarios(scenarios)
    except ScenarioError as exc:
        raise ValidationError({"scenarios": str(exc)}) from exc
    if mode == "real" and not model_profile:
        raise ValidationError({"model_profile": "Real signals need a model profile."})
    run = EvaluationRun.objects.create(
        created_by=user,
        scenarios=scenarios,
        policies=list(policies),
        mode=mode,
        memory=memory,
        model_profile=model_profile,
        seeds=seeds,
        sessions=sessions,
        note=note,
    )
    run.episodes_total = total_episodes(scenario_set, _config(run))
    run.full_clean()
    run.save(update_fields=["episodes_total"])
    # By name, as agents/outbox/enqueue.py does for the agents' jobs: services never import jobs.py.
    transaction.on_commit(lambda: enqueue.send_job(RUN_EVALUATION_JOB, run.pk))
    return run


def _config(run: EvaluationRun) -> RunConfig:
    return RunConfig(
        policies=list(run.policies),
        mode=run.mode,
        memory=MEMORY[run.memory],
        seeds=run.seeds,
        sessions=run.sessions,
        model=run.model_profile,
    )


def _claim(run_id: int) -> EvaluationRun | None:
    with transaction.atomic():
        run = EvaluationRun.objects.select_for_update().filter(pk=run_id).first()
        if run is None or run.status != RunStatus.QUEUED:
            return None
        run.status = RunStatus.RUNNING
        run.started_at = timezone.now()
        run.save(update_fields=["status", "started_at"])
        return run


def execute_run(*, run_id: int) -> str:
    """Play the run (offline engine) and store its report. A run already started or finished
    is left alone, so a redelivered job does nothing."""
    run = _claim(run_id)
    if run is None:
        return "skipped"
    config = _config(run)
    done = 0

    def progress(count: int) -> None:
        nonlocal done
        done += count
        if done % PROGRESS_EVERY == 0:
            EvaluationRun.objects.filter(pk=run_id).update(episodes_done=done)

    try:
        scenario_set = load_scenarios(run.scenarios)
        chat_model: Any = None
        if config.mode == "real":
            chat_model, config.price_per_1k_tokens = chat_model_for_profile(run.model_profile)
            config.endpoint = profile_endpoint(run.model_profile)
        output = run_offline(scenario_set, config, chat_model=chat_model, progress=progress)
        report = build_report(
            output, scenarios_name=scenario_set.name, scenarios_origin=run.scenarios
        )
        report.pop("episodes")  # the stored report keeps the metrics; the command keeps all
    except Exception as exc:
        log.exception("evaluation run %s failed", run_id)
        EvaluationRun.objects.filter(pk=run_id).update(
            status=RunStatus.FAILED, error=f"{type(exc).__name__}: {exc}"[:4000],
            finished_at=timezone.now(),
        )  # fmt: skip
        return "failed"
    EvaluationRun.objects.filter(pk=run_id).update(
        status=RunStatus.DONE,
        report=report,
        episodes_done=len(output.results),
        finished_at=timezone.now(),
    )
    return "done"
