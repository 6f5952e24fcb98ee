"""/api/tasks/{id}/plan: the task's shared plan (issue 30, ADR 0024) as its panel shows it, and
a step ticked or given to someone, through the services of the panel's buttons
(``agents.services.plans``), so the document's plan section and every open page follow."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.http import Http404, HttpRequest
from ninja import Field, Router, Schema

from agents import selectors
from agents.models import PlanStep
from agents.services import plans as plan_services
from collab.api.auth import current_user
from collab.api.schemas import BadRequest, Error, PathId, body_config
from collab.tasks.selectors import get_task_access

router = Router(tags=["plan"])

READ = {400: BadRequest, 401: Error, 404: Error}
WRITE = {**READ, 403: Error}


class StepOut(Schema):
    id: int
    index: int = Field(description="Its place in the plan, from 0.")
    text: str
    assignee: str = Field(description="The agent's name or the person's username; '' nobody.")
    assignee_choice: str = Field(
        description="`agent:<id>`, `person:<user id>` or '' (as `assignee` takes it)."
    )
    status: PlanStep.Status
    note: str
    decided_by: str = Field(description="Who decided it was done (an agent's check or a person).")
    verification: str = Field(description="The check that passed, or why it did not.")
    done_at: datetime | None
    turn_id: int | None = Field(description="The agent's turn on this step, if one started.")


class ChoiceOut(Schema):
    value: str = Field(description="`agent:<id>` or `person:<user id>`.")
    label: str


class ProblemOut(Schema):
    line: int
    text: str
    reason: str


class PlanOut(Schema):
    task_id: int
    status: str = Field(description="`proposed` (waiting for a person) or `approved`.")
    coordinator: str | None = Field(description="The agent that proposed it.")
    steps: list[StepOut] = Field(description="In plan order.")
    done: int = Field(description="How many steps are done.")
    choices: list[ChoiceOut] = Field(description="Whom a step can be given to.")
    problems: list[ProblemOut] = Field(description="Lines of the plan section that are not steps.")


class TickIn(Schema):
    model_config = body_config({"done": True})

    done: bool = Field(description="true: done (your check); false: back to to do.")


class AssignIn(Schema):
    model_config = body_config({"assignee": "agent:3"})

    assignee: str = Field(
        max_length=40,
        pattern=r"^((agent|person):[0-9]{1,19})?$",
        description="`agent:<id>` (an agent of the task), `person:<user id>` (a member) or '' "
        "(nobody). An unfinished step goes back to to do.",
    )


def _step(step: PlanStep) -> dict[str, Any]:
    choice = (
        f"agent:{step.agent_id}"
        if step.agent_id
        else (f"person:{step.person_id}" if step.person_id else "")
    )
    return {
        "id": step.pk,
        "index": step.index,
        "text": step.text,
        "assignee": step.assignee_name,
        "assignee_choice": choice,
        "status": step.status,
        "note": step.note,
        "decided_by": step.decided_by,
        "verification": step.verification,
        "done_at": step.done_at,
        "turn_id": step.turn_id,
    }


def _plan(task_id: int, found: dict[str, Any]) -> dict[str, Any]:
    plan = found["plan"]
    return {
        "task_id": task_id,
        "status": plan.status,
        "coordinator": plan.coordinator.name if plan.coordinator else None,
        "steps": [_step(step) for step in found["steps"]],
        "done": found["done"],
        "choices": [{"value": value, "label": label} for value, label in found["choices"]],
        "problems": [
            {"line": p.get("line", 0), "text": p.get("text", ""), "reason": p.get("reason", "")}
            for p in found["problems"]
        ],
    }


def _reread(access: Any, step: PlanStep) -> PlanStep:
    """The step as the service left it, with what starting the next steps changed."""
    return selectors.get_task_plan_step(access, step.pk)


@router.get(
    "/{task_id}/plan",
    response={200: PlanOut, **READ},
    summary="Read a task's shared plan: its steps, who has each, what is done (any member)",
)
def read_plan(request: HttpRequest, task_id: PathId) -> dict[str, Any]:
    """404 when the task has no plan (a plan exists once a person accepts one)."""
    access = get_task_access(current_user(request), task_id)
    found = selectors.task_plan(task=access.task)
    if found is None:
        raise Http404("This task has no plan.")
    return _plan(access.task.pk, found)


@router.post(
    "/{task_id}/plan/steps/{step_id}/tick",
    response={200: StepOut, **WRITE},
    summary="Tick a plan step done (your check) or untick it (owners and editors)",
)
def tick_step(request: HttpRequest, task_id: PathId, step_id: PathId, payload: TickIn) -> Any:
    """The step's line in the document follows; the agents' next steps start."""
    access = get_task_access(current_user(request), task_id)
    step = selectors.get_task_plan_step(access, step_id)
    plan_services.tick_step(membership=access.membership, step=step, done=payload.done)
    return _step(_reread(access, step))


@router.post(
    "/{task_id}/plan/steps/{step_id}/assign",
    response={200: StepOut, **WRITE},
    summary="Give a plan step to an agent of the task, a member, or nobody (owners and editors)",
)
def assign_step(request: HttpRequest, task_id: PathId, step_id: PathId, payload: AssignIn) -> Any:
    """An agent given a step starts on it (a turn with trigger `plan`). 400 with
    `errors.assignee` for anyone else."""
    access = get_task_access(current_user(request), task_id)
    step = selectors.get_task_plan_step(access, step_id)
    plan_services.reassign_step(membership=access.membership, step=step, assignee=payload.assignee)
    return _step(_reread(access, step))
