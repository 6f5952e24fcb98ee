"""The shared plan (issue 30, ADR 0024): a coordinator agent's plan, proposed as a suggestion,
becomes the task's ``Plan`` when a person accepts it; its steps are read from the document's
plan section (``agents.chains.plan``) and written back to it as they change. Agents pick up
the steps assigned to them, one turn per step (trigger ``plan``, through ``start_turn``, so
budget, guards, Stop and idempotency apply); a step is done only when its check passes (the
agent's own check, stored by the plan producer) or a person ticks it, and who decided is kept.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from agents.chains import plan as plan_format
from agents.models import Agent, Hop, Plan, PlanStep, Suggestion, Trigger, Turn, TurnStatus
from agents.outbox import enqueue, events
from agents.services import chains
from agents.services.chat import post_agent_message
from agents.services.edits import edit_document
from agents.services.turns import start_turn
from collab.realtime import broadcast
from collab.tasks import documents
from collab.tasks.models import Message, Task
from collab.workspaces.models import Membership
from collab.workspaces.permissions import require_editor, require_same_workspace

NOBODY = "nobody called @{name} is on this task"


def suggestion_accepted(*, suggestion: Suggestion, user: User) -> Plan | None:
    """A person accepted a suggestion (inside its transaction): when the document now has a
    plan section and the suggestion brought it, the plan is approved and the agents start."""
    if plan_format.HEADING not in (suggestion.final_text or suggestion.replace):
        return None
    task = suggestion.task
    plan, _ = Plan.objects.select_for_update().get_or_create(task=task)
    plan.status, plan.approved_by, plan.suggestion = Plan.Status.APPROVED, user, suggestion
    if suggestion.agent_id:
        plan.coordinator_id = suggestion.agent_id
    plan.save()
    return sync_plan(task=task, by=user)


def sync_plan(*, task: Task, by: User | None = None) -> Plan | None:
    """Read the plan section of the live document into the task's steps (by position), report
    the lines that are not steps, and start the agents' next steps."""
    plan = Plan.objects.select_for_update().filter(task=task).first()
    if plan is None:
        return None
    section = plan_format.parse(documents.read_document(task=task).text)
    problems: list[dict[str, Any]] = [
        {"line": p.number, "text": p.raw, "reason": p.reason} for p in section.problems
    ]
    existing = {step.index: step for step in plan.steps.select_for_update()}
    agents = {a.name.lower(): a for a in Agent.objects.filter(tasks=task)}
    people = {
        m.user.get_username().lower(): m.user
        for m in Membership.objects.filter(workspace_id=task.workspace_id).select_related("user")
    }
    for index, line in enumerate(section.steps):
        step = existing.pop(index, None) or PlanStep(plan=plan, index=index)
        agent = agents.get(line.assignee.lower()) if line.assignee else None
        person = None if agent or not line.assignee else people.get(line.assignee.lower())
        if line.assignee and agent is None and person is None:
            problems.append(
                {"line": line.number, "text": line.raw, "reason": NOBODY.format(name=line.assignee)}
            )
        before = step.status
        step.text, step.assignee_name, step.line = line.text, line.assignee, line.raw
        step.agent, step.person = agent, person
        if line.status == plan_format.DONE and before != plan_format.DONE:
            _decide_done(step, person=by, verification="ticked in the document")
        elif line.status != plan_format.DONE:
            step.status, step.note = line.status, line.note
            step.done_by_agent = step.done_by_person = step.done_at = None
        step.save()
    PlanStep.objects.filter(pk__in=[s.pk for s in existing.values()]).delete()
    plan.problems = problems
    plan.save(update_fields=["problems"])
    start_steps(plan=plan)
    transaction.on_commit(lambda: events.plan_changed(task.pk))
    return plan


def _decide_done(
    step: PlanStep, *, person: User | None = None, agent: Agent | None = None, verification: str
) -> None:
    step.status = plan_format.DONE
    step.done_by_person, step.done_by_agent = person, agent
    step.done_at = timezone.now()
    step.verification = verification[:300]
    who = agent.name if agent else (person.get_username() if person else "")
    step.note = f"checked by {who}" if who else ""


def start_steps(*, plan: Plan) -> list[Turn]:
    """Each active agent of the task with no step under way takes its first step to do."""
    if plan.status != Plan.Status.APPROVED:
        return []
    steps = list(plan.steps.select_related("agent", "turn").order_by("index"))
    for step in steps:  # a step whose turn was stopped or failed waits for a person
        ended = step.turn is not None and step.turn.status in (
            TurnStatus.CANCELLED,
            TurnStatus.FAILED,
        )
        if step.status != plan_format.DOING or step.turn is None:
            continue
        note = f"its turn {step.turn.get_status_display().lower()}: a person decides"
        if not ended:
            note = _review_ended(step) if step.turn.status == TurnStatus.DONE else ""
        if note:
            step.status, step.note = plan_format.BLOCKED, note
            step.save(update_fields=["status", "note"])
            _reflect(step)
    busy = {s.agent_id for s in steps if s.status == plan_format.DOING and s.agent_id}
    started = []
    for step in steps:
        agent = step.agent
        if agent is None or step.status != plan_format.TODO or agent.pk in busy:
            continue
        if not agent.is_active:
            continue
        busy.add(agent.pk)
        turn = start_turn(
            agent=agent,
            task=plan.task,
            trigger=Trigger.PLAN,
            requested_by=plan.approved_by,
            inputs={"plan_step": step.pk, "prompt": step.text},
        )
        step.status, step.turn, step.note = plan_format.DOING, turn, ""
        step.save(update_fields=["status", "turn", "note"])
        _reflect(step)
        started.append(turn)
    return started


def step_turn_finished(*, turn: Turn) -> PlanStep | None:
    """A step's turn ended. With a reviewer agent on the task (``reviewer_for``), the step
    goes to it as a review request hop and waits for its verdict; without one, the turn's own
    check (``turn.context["plan_check"]``, the plan producer's) decides whether the step is
    done. Then the agent's next step starts. A reviewer's turn checking a step ends here too
    (``step_reviewed``)."""
    if turn.inputs.get("review_step"):
        return step_reviewed(turn=turn)
    step_id = turn.inputs.get("plan_step")
    if not step_id:
        return None
    with transaction.atomic():
        step = (
            PlanStep.objects.select_for_update(of=("self",))  # the agent may be null
            .select_related("plan__task", "agent")
            .filter(pk=step_id, turn=turn, status=plan_format.DOING)
            .first()
        )
        if step is None:
            return None  # redelivered, reassigned or ticked meanwhile
        # the context as ``apply`` stored it (the caller's row was read before)
        stored = Turn.objects.filter(pk=turn.pk).values_list("context", flat=True).first()
        check = (stored or {}).get("plan_check") or {}
        reviewer = reviewer_for(step)
        if reviewer is not None and step.note.startswith("waiting for "):
            return None  # asked already
        if reviewer is not None:
            _request_review(step, turn=turn, reviewer=reviewer, own_check=check)
        elif check.get("passed"):
            _decide_done(step, agent=turn.agent, verification=str(check.get("why", "")))
        else:
            step.status = plan_format.BLOCKED
            step.note = str(check.get("why") or "no check ran: a person checks it and ticks it")[
                :300
            ]
            step.verification = step.note
        step.save()
        _reflect(step)
        start_steps(plan=step.plan)
        transaction.on_commit(lambda: events.plan_changed(step.plan.task_id))
    return step


# --- A reviewer's check of a step ---------------------------------------------------------


def reviewer_for(step: PlanStep) -> Agent | None:
    """The task's reviewer-role agent (``plan.is_reviewer``: by its name or instructions),
    active and answering mentions, other than the step's own agent; the first by name."""
    agents = Agent.objects.filter(
        tasks=step.plan.task_id, is_active=True, on_mention=True
    ).order_by("name", "id")
    if step.agent_id is not None:
        agents = agents.exclude(pk=step.agent_id)
    return next(
        (a for a in agents if plan_format.is_reviewer(name=a.name, instructions=a.instructions)),
        None,
    )


def _request_review(
    step: PlanStep, *, turn: Turn, reviewer: Agent, own_check: dict[str, Any]
) -> None:
    """The step's agent asks the reviewer to check the step: a chat message from it that
    addresses the reviewer, through the hop pipeline (``chains.agents_addressed``: the chain's
    guards, Stop and a question's pause apply); the step waits, ``doing``, for the verdict."""
    own = str(own_check.get("why") or "") if own_check else "none ran"
    body = plan_format.review_request(
        reviewer=reviewer.name, number=step.index + 1, text=step.text, own_check=own
    )
    message = post_agent_message(
        task_id=step.plan.task_id, author_name=turn.agent.name, body=body, kind=Message.Kind.AGENT
    )
    hops = chains.agents_addressed(turn=turn, message=message, inputs={"review_step": step.pk})
    transaction.on_commit(
        lambda: broadcast.chat_message(
            message.pk, message=message, extras={"hops": hops} if hops else None
        )
    )
    started = Hop.objects.filter(message=message, to_turn__isnull=False).exists()
    step.note = (
        f"waiting for {reviewer.name}'s check"
        if started
        else f"waiting for {reviewer.name}'s check (held: a person lets the chain go on)"
    )
    step.verification = ""


def step_reviewed(*, turn: Turn) -> PlanStep | None:
    """A reviewer's turn checking a step ended: its verdict (``turn.context["plan_review"]``,
    the plan producer's) marks the step done (decided by the reviewer, its check recorded) or
    blocked with what is missing. Once: a redelivered, reassigned or ticked step is left."""
    if turn.parent_id is None:
        return None
    with transaction.atomic():
        step = (
            PlanStep.objects.select_for_update(of=("self",))
            .select_related("plan__task", "agent")
            .filter(
                pk=int(turn.inputs.get("review_step") or 0),
                turn_id=turn.parent_id,
                status=plan_format.DOING,
            )
            .first()
        )
        if step is None:
            return None
        stored = Turn.objects.filter(pk=turn.pk).values_list("context", flat=True).first()
        verdict = (stored or {}).get("plan_review") or {}
        why = str(verdict.get("why") or "the review gave no verdict: a person checks it")
        if verdict.get("passed"):
            _decide_done(step, agent=turn.agent, verification=f"{turn.agent.name}'s check: {why}")
        else:
            step.status = plan_format.BLOCKED
            step.note = f"{turn.agent.name}: {why}"[:300]
            step.verification = step.note
        step.save()
        _reflect(step)
        start_steps(plan=step.plan)
        transaction.on_commit(lambda: events.plan_changed(step.plan.task_id))
    return step


def _review_ended(step: PlanStep) -> str:
    """How the reviewer's turn checking a step ended when it was stopped or failed ("" when
    it has not, or there is none)."""
    review = (
        Turn.objects.filter(parent_id=step.turn_id, inputs__review_step=step.pk)
        .order_by("-pk")
        .first()
    )
    if review is None or review.status not in (TurnStatus.CANCELLED, TurnStatus.FAILED):
        return ""
    return f"the review turn {review.get_status_display().lower()}: a person decides"


def _locked_step(membership: Membership, step: PlanStep) -> PlanStep:
    require_editor(membership)
    require_same_workspace(membership, step.plan.task)
    return (
        PlanStep.objects.select_for_update(of=("self",))
        .select_related("plan__task")
        .get(pk=step.pk)
    )


@transaction.atomic
def tick_step(*, membership: Membership, step: PlanStep, done: bool) -> PlanStep:
    """A person marks a step done (their own check) or not done."""
    locked = _locked_step(membership, step)
    if done:
        _decide_done(locked, person=membership.user, verification="a person's check")
    else:
        locked.status, locked.note, locked.verification = plan_format.TODO, "", ""
        locked.done_by_agent = locked.done_by_person = locked.done_at = None
    locked.save()
    _reflect(locked)
    start_steps(plan=locked.plan)
    transaction.on_commit(lambda: events.plan_changed(locked.plan.task_id))
    return locked


@transaction.atomic
def reassign_step(*, membership: Membership, step: PlanStep, assignee: str) -> PlanStep:
    """``assignee``: ``agent:<id>`` (an agent of the task), ``person:<id>`` (a member of the
    workspace) or "" (nobody). An unfinished step goes back to ``todo``."""
    locked = _locked_step(membership, step)
    task = locked.plan.task
    kind, _, raw_id = assignee.partition(":")
    agent = person = None
    if assignee:
        if not raw_id.isdigit() or kind not in ("agent", "person"):
            raise ValidationError({"assignee": "Choose an agent of the task or a member."})
        if kind == "agent":
            agent = Agent.objects.filter(tasks=task, pk=int(raw_id)).first()
        else:
            found = (
                Membership.objects.filter(workspace_id=task.workspace_id, user_id=int(raw_id))
                .select_related("user")
                .first()
            )
            person = found.user if found else None
        if agent is None and person is None:
            raise ValidationError({"assignee": "Choose an agent of the task or a member."})
    locked.agent, locked.person = agent, person
    locked.assignee_name = agent.name if agent else (person.get_username() if person else "")
    if locked.status != plan_format.DONE:
        locked.status, locked.note, locked.turn = plan_format.TODO, "", None
    locked.save()
    _reflect(locked)
    start_steps(plan=locked.plan)
    transaction.on_commit(lambda: events.plan_changed(task.pk))
    return locked


def _reflect(step: PlanStep) -> None:
    """Write the step's line back into the document (a minimal edit of that line only); a
    line a person changed meanwhile is left as they wrote it (the next sync reads it)."""
    line = plan_format.render(
        text=step.text, assignee=step.assignee_name, status=step.status, note=step.note
    )
    if line == step.line:
        return
    applied = None
    if step.line:
        applied = edit_document(
            task_id=step.plan.task_id,
            find=step.line,
            replace=line,
            author_label="the plan",
            author=None,
        )
    if applied is not None:
        step.line = line
        step.save(update_fields=["line"])


def documents_edited(*, latest_updates: dict[int, int]) -> None:
    """People edited documents (inside that transaction): the tasks with a plan read it again
    once the edit is committed."""
    planned = Plan.objects.filter(task_id__in=list(latest_updates)).values_list(
        "task_id", flat=True
    )
    for task_id in sorted(planned):
        enqueue.on_commit(enqueue.PLAN_SYNC, task_id)


@transaction.atomic
def sync_plan_of(*, task_id: int) -> Plan | None:
    task = Task.objects.filter(pk=task_id).first()
    return None if task is None else sync_plan(task=task)
