from __future__ import annotations

from collections.abc import Sequence

from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.http import Http404

from agents.evaluation.models import EvaluationRun


def require_evaluator(user: User) -> None:
    """Evaluation is for staff: anyone else finds no such page (404)."""
    if not user.is_staff:
        raise Http404("No such page.")


def list_runs(user: User) -> QuerySet[EvaluationRun]:
    require_evaluator(user)
    return EvaluationRun.objects.select_related("created_by").defer("report")


def get_run(user: User, run_id: int) -> EvaluationRun:
    require_evaluator(user)
    run = EvaluationRun.objects.filter(pk=run_id).first()
    if run is None:
        raise Http404("No such run.")
    return run


def get_runs(user: User, run_ids: Sequence[int]) -> list[EvaluationRun]:
    require_evaluator(user)
    runs = {r.pk: r for r in EvaluationRun.objects.filter(pk__in=run_ids)}
    return [runs[i] for i in run_ids if i in runs]
