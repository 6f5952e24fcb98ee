"""/api/evaluation (staff, as the evaluation pages: anyone else gets 404): the runs, one run's
results (its report), and starting a run, through ``agents.evaluation`` (its selectors, the
page's form and ``services.create_run``, which enqueues the run's job on commit)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.core.exceptions import ValidationError
from django.http import HttpRequest
from ninja import Field, Query, Router, Schema, Status

from agents.evaluation import selectors, services
from agents.evaluation.forms import RunForm
from agents.evaluation.models import EvaluationRun, MemoryChoice, Mode, RunStatus
from collab.api.auth import current_user
from collab.api.pagination import PageFields, PageQuery, cursor_page
from collab.api.schemas import BadRequest, Error, PathId, body_config

router = Router(tags=["evaluation"])  # mounted under /api/evaluation

STAFF = {400: BadRequest, 401: Error, 404: Error}


class RunOut(Schema):
    id: int
    label: str
    scenarios: str = Field(description="The shipped scenario file it plays.")
    policies: list[str] = Field(description="The clarification policies compared.")
    mode: Mode
    memory: MemoryChoice
    model_profile: str
    seeds: int
    sessions: int | None
    note: str
    status: RunStatus
    episodes_total: int
    episodes_done: int
    error: str
    created_by: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class RunDetailOut(RunOut):
    report: dict[str, Any] | None = Field(
        description="Its results once done: the configuration and the metrics per policy (as "
        "the run's page and its report.json); null before."
    )


class RunPage(PageFields):
    runs: list[RunOut] = Field(description="Oldest first.")


class RunIn(Schema):
    model_config = body_config(
        {"scenarios": "default", "policies": ["ask_once", "never"], "mode": "oracle"}
    )

    scenarios: str = Field(max_length=100, description="A shipped scenario file's name.")
    policies: list[str] = Field(min_length=1, max_length=20)
    mode: Mode = Mode.ORACLE
    memory: MemoryChoice = MemoryChoice.BOTH
    model_profile: str = Field("", max_length=80, description="A model's name (real signals).")
    seeds: int = Field(1, ge=1, le=10)
    sessions: int | None = Field(None, ge=1, le=50)
    note: str = Field("", max_length=200)


def _run(run: EvaluationRun) -> dict[str, Any]:
    return {
        "id": run.pk,
        "label": run.label,
        "scenarios": run.scenarios,
        "policies": list(run.policies),
        "mode": run.mode,
        "memory": run.memory,
        "model_profile": run.model_profile,
        "seeds": run.seeds,
        "sessions": run.sessions,
        "note": run.note,
        "status": run.status,
        "episodes_total": run.episodes_total,
        "episodes_done": run.episodes_done,
        "error": run.error,
        "created_by": run.created_by.get_username() if run.created_by else None,
        "created_at": run.created_at,
        "started_at": run.started_at,
        "finished_at": run.finished_at,
    }


@router.get("/runs", response={200: RunPage, **STAFF}, summary="List evaluation runs (staff)")
def list_runs(request: HttpRequest, page: Query[PageQuery]) -> dict[str, Any]:
    found = cursor_page(selectors.list_runs(current_user(request)), page)
    return {"runs": [_run(run) for run in found.rows], **found.fields()}


@router.get(
    "/runs/{run_id}",
    response={200: RunDetailOut, **STAFF},
    summary="Get an evaluation run with its results (staff)",
)
def get_run(request: HttpRequest, run_id: PathId) -> dict[str, Any]:
    run = selectors.get_run(current_user(request), run_id)
    return {**_run(run), "report": run.report}


@router.post(
    "/runs",
    response={201: RunOut, **STAFF},
    summary="Start an evaluation run; a worker plays it (staff)",
)
def start_run(request: HttpRequest, payload: RunIn) -> Status[dict[str, Any]]:
    """Checked as the page's form checks it (a shipped scenario file, known policies, a model
    for real signals). Queued; follow it with `GET /api/evaluation/runs/{id}`."""
    user = current_user(request)
    selectors.require_evaluator(user)
    data = {k: "" if v is None else v for k, v in payload.dict().items()}
    form = RunForm({k: v if isinstance(v, list) else str(v) for k, v in data.items()})
    if not form.is_valid():
        raise ValidationError(form.errors.as_data())
    return Status(201, _run(services.create_run(user=user, **form.cleaned_data)))
