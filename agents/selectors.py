"""Reads of agents and their work, behind the task and workspace permission checks."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.db.models import Exists, OuterRef, Q, QuerySet
from django.http import Http404
from django.urls import reverse

from agents.models import (
    ACTIVE_STATUSES,
    FEEDBACK_TARGETS,
    Action,
    ActionKind,
    Agent,
    AgentNote,
    Assumption,
    Feedback,
    Hop,
    HopKind,
    Plan,
    PlanStep,
    Question,
    Suggestion,
    Turn,
)
from collab.tasks.models import Message, Task
from collab.tasks.selectors import TaskAccess
from collab.workspaces.models import Membership


@dataclass(frozen=True)
class AgentRow:
    agent: Agent
    turn: Turn | None


def list_task_agents(task: Task) -> list[AgentRow]:
    """The task's agents, each with its latest turn on this task."""
    return _with_latest_turns(
        task, list(task.agents.select_related("model_profile").order_by("name", "id"))
    )


def _with_latest_turns(task: Task, agents: Sequence[Agent]) -> list[AgentRow]:
    latest: dict[int, Turn] = {}
    for turn in (
        Turn.objects.filter(task=task, agent__in=agents).select_related("agent").order_by("-id")
    ):
        latest.setdefault(turn.agent_id, turn)
        if len(latest) == len(agents):
            break
    return [AgentRow(agent=a, turn=latest.get(a.pk)) for a in agents]


def task_agent_cards(task: Task, *, can_add: bool = True) -> dict[str, Any]:
    """The task's agents with their latest turns, and (``can_add``: for editors) the
    workspace's active agents that can be added to it: the agents pane's cards. The agents
    are read once, both lists together."""
    if not can_add:
        return {"rows": list_task_agents(task), "addable": []}
    joined = Agent.tasks.through.objects.filter(agent_id=OuterRef("pk"), task_id=task.pk)
    agents = list(
        Agent.objects.annotate(on_task=Exists(joined))
        .filter(Q(on_task=True) | Q(workspace_id=task.workspace_id, is_active=True))
        .select_related("model_profile")
        .order_by("name", "id")
    )
    on_task = [agent for agent in agents if agent.on_task]
    return {
        "rows": _with_latest_turns(task, on_task),
        "addable": [agent for agent in agents if not agent.on_task],
    }


def task_panel(*, task: Task, membership: Membership | None) -> dict[str, Any]:
    cards = task_agent_cards(task, can_add=membership is not None and membership.can_edit)
    questions = list(Question.objects.filter(task=task).select_related("agent", "answered_by")[:10])
    suggestions = list(
        Suggestion.objects.filter(task=task).select_related("agent", "proposed_by", "decided_by")[
            :10
        ]
    )
    edits = list_task_edits(task)
    widgets = feedback_widgets(
        user=membership.user if membership is not None else None,
        task_id=task.pk,
        targets={
            Feedback.TargetKind.QUESTION: [q.pk for q in questions],
            Feedback.TargetKind.SUGGESTION: [s.pk for s in suggestions],
            Feedback.TargetKind.EDIT: [e.pk for e in edits],
        },
    )
    for kind, items in (
        (Feedback.TargetKind.QUESTION, questions),
        (Feedback.TargetKind.SUGGESTION, suggestions),
        (Feedback.TargetKind.EDIT, edits),
    ):
        for item in items:
            item.feedback_widget = widgets[(kind, item.pk)]  # type: ignore[union-attr]
    return {
        **cards,
        "questions": questions,
        "suggestions": suggestions,
        "edits": edits,
        "notes": list(AgentNote.objects.filter(task=task).select_related("agent")[:10]),
        "is_owner": membership is not None and membership.is_owner,
        "plan": task_plan(task=task),
    }


def list_workspace_agents(membership: Membership) -> list[Agent]:
    return list(
        Agent.objects.filter(workspace_id=membership.workspace_id).select_related("model_profile")
    )


def get_workspace_agent(membership: Membership, agent_id: int) -> Agent:
    agent = Agent.objects.filter(pk=agent_id, workspace_id=membership.workspace_id).first()
    if agent is None:
        raise Http404("No such agent.")
    return agent


def get_task_turn(access: TaskAccess, turn_id: int) -> Turn:
    turn = Turn.objects.select_related("agent", "task").filter(pk=turn_id, task=access.task).first()
    if turn is None:
        raise Http404("No such turn.")
    return turn


def get_task_suggestion(access: TaskAccess, suggestion_id: int) -> Suggestion:
    found = Suggestion.objects.select_related("agent", "proposed_by", "task").filter(
        pk=suggestion_id, task=access.task
    )
    suggestion = found.first()
    if suggestion is None:
        raise Http404("No such suggestion.")
    return suggestion


def get_task_question(access: TaskAccess, question_id: int) -> Question:
    question = (
        Question.objects.select_related("agent", "task")
        .filter(pk=question_id, task=access.task)
        .first()
    )
    if question is None:
        raise Http404("No such question.")
    return question


def active_turn(agent: Agent, task: Task) -> Turn | None:
    return Turn.objects.filter(agent=agent, task=task, status__in=ACTIVE_STATUSES).first()


# --- Feedback ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class FeedbackTarget:
    """A piece of agent work someone can rate, found inside one task."""

    kind: str  # Feedback.TargetKind
    obj: Message | Question | Suggestion | Action
    task: Task
    turn_id: int | None

    @property
    def target_id(self) -> int:
        return int(self.obj.pk)


def _message_turn_id(message: Message) -> int | None:
    """The turn whose reply (or question) posted an agent chat message."""
    return (
        Action.objects.filter(turn__task_id=message.task_id, result__message_id=message.pk)
        .values_list("turn_id", flat=True)
        .first()
    )


def get_feedback_target(access: TaskAccess, kind: str, target_id: int) -> FeedbackTarget:
    """The target of a feedback click, in the task the person can see; 404 otherwise (a
    person's own chat message is no target: feedback is on agent work only)."""
    task = access.task
    obj: Message | Question | Suggestion | Action | None
    turn_id: int | None = None
    if kind == Feedback.TargetKind.MESSAGE:
        obj = Message.objects.filter(pk=target_id, task=task, kind=Message.Kind.AGENT).first()
        if obj is not None:
            turn_id = _message_turn_id(obj)
    elif kind == Feedback.TargetKind.QUESTION:
        obj = Question.objects.filter(pk=target_id, task=task).first()
        turn_id = obj.turn_id if obj else None
    elif kind == Feedback.TargetKind.SUGGESTION:
        obj = Suggestion.objects.filter(pk=target_id, task=task, agent__isnull=False).first()
        turn_id = obj.turn_id if obj else None
    elif kind == Feedback.TargetKind.EDIT:
        obj = _task_edits(task).filter(pk=target_id).first()
        turn_id = obj.turn_id if obj else None
    else:
        obj = None
    if obj is None:
        raise Http404("No such agent work on this task.")
    return FeedbackTarget(kind=kind, obj=obj, task=task, turn_id=turn_id)


def _task_edits(task: Task) -> QuerySet[Action]:
    return Action.objects.filter(
        turn__task=task,
        kind=ActionKind.EDIT,
        status=Action.Status.APPLIED,
        result__edited_directly=True,
    )


def get_task_edit(access: TaskAccess, action_id: int) -> Action:
    """One direct edit of an agent on the task ``access`` (a task access) opens; 404 if none."""
    edit = _task_edits(access.task).select_related("turn__agent").filter(pk=action_id).first()
    if edit is None:
        raise Http404("No such agent edit on this task.")
    return edit


def list_task_edits(task: Task, *, limit: int = 10) -> list[Action]:
    """The agents' direct edits of the task's document, newest first (the "edit notices")."""
    edits = _task_edits(task).select_related("turn__agent").order_by("-applied_at", "-id")
    return list(edits[:limit])


@dataclass
class FeedbackWidget:
    """What one person sees under one piece of agent work: their own choice and the counts."""

    kind: str
    target_id: int
    task_id: int
    rating: str | None = None
    comment: str = ""
    unnecessary: bool = False
    up: int = 0
    down: int = 0
    unnecessary_count: int = 0

    @property
    def dom_id(self) -> str:
        return f"feedback-{self.kind}-{self.target_id}"

    @property
    def is_question(self) -> bool:
        return self.kind == Feedback.TargetKind.QUESTION

    @property
    def has_mine(self) -> bool:
        return bool(self.rating or self.unnecessary or self.comment)


FEEDBACK_TARGET_FIELDS: dict[str, str] = {
    kind: f"{field}_id" for kind, field in FEEDBACK_TARGETS.items()
}


def feedback_widgets(
    *, user: Any, task_id: int, targets: dict[str, list[int]]
) -> dict[tuple[str, int], FeedbackWidget]:
    """Widgets for many targets of one task in one query: ``targets`` maps a target kind to
    ids. Rows of everyone are read (for the counts); a task has few of them per target."""
    widgets = {
        (kind, pk): FeedbackWidget(kind=kind, target_id=pk, task_id=task_id)
        for kind, ids in targets.items()
        for pk in ids
    }
    condition = Q()
    for kind, ids in targets.items():
        if ids:
            condition |= Q(target_kind=kind, **{f"{FEEDBACK_TARGET_FIELDS[kind]}__in": ids})
    if not widgets or not condition:
        return widgets
    rows = Feedback.objects.filter(condition, task_id=task_id).values(
        "target_kind",
        *FEEDBACK_TARGET_FIELDS.values(),
        "user_id",
        "rating",
        "comment",
        "unnecessary_question",
    )
    for row in rows:
        kind = row["target_kind"]
        widget = widgets.get((kind, row[FEEDBACK_TARGET_FIELDS[kind]]))
        if widget is None:
            continue
        widget.up += row["rating"] == Feedback.Rating.UP
        widget.down += row["rating"] == Feedback.Rating.DOWN
        widget.unnecessary_count += bool(row["unnecessary_question"])
        if row["user_id"] == getattr(user, "pk", None):
            widget.rating = row["rating"] or None
            widget.comment = row["comment"]
            widget.unnecessary = row["unnecessary_question"]
    return widgets


def feedback_widget(*, user: Any, kind: str, target_id: int, task_id: int) -> FeedbackWidget:
    return feedback_widgets(user=user, task_id=task_id, targets={kind: [target_id]})[
        (kind, target_id)
    ]


def attach_message_feedback(user: Any, task_id: int, messages: list[dict[str, Any]]) -> None:
    """Give every agent chat message (serialized dicts) its feedback widget, in one query."""
    ids = [m["id"] for m in messages if m.get("kind") == Message.Kind.AGENT]
    if not ids:
        return
    widgets = feedback_widgets(
        user=user, task_id=task_id, targets={Feedback.TargetKind.MESSAGE: ids}
    )
    for message in messages:
        if message.get("kind") == Message.Kind.AGENT:
            message["feedback"] = widgets[(Feedback.TargetKind.MESSAGE, message["id"])]


def assumption_payload(assumption: Assumption) -> dict[str, Any]:
    """An assumption as pages and API clients see it beside its "I assumed X" message."""
    return {
        "id": assumption.pk,
        "status": assumption.status,
        "question_id": assumption.question_id,
        "undone_by": assumption.undone_by.get_username() if assumption.undone_by else "",
        "undo_url": reverse("agents:undo_assumption", args=[assumption.task_id, assumption.pk]),
    }


def attach_message_assumptions(task_id: int, messages: list[dict[str, Any]]) -> None:
    """Give the agents' "I assumed X" messages their assumption (status, Undo), in one query."""
    ids = [m["id"] for m in messages if m.get("kind") == Message.Kind.AGENT]
    if not ids:
        return
    found = {
        a.message_id: a
        for a in Assumption.objects.filter(task_id=task_id, message_id__in=ids).select_related(
            "undone_by"
        )
    }
    for message in messages:
        assumption = found.get(message["id"])
        if assumption is not None:
            message["assumption"] = assumption_payload(assumption)


def hop_payload(*, kind: str, to: str) -> dict[str, str]:
    """How a chat message shows the hop it made (issue 30): its type and the agent addressed."""
    return {"kind": kind, "label": HopKind(kind).label, "to": to}


def attach_message_hops(task_id: int, messages: list[dict[str, Any]]) -> None:
    """Give the agents' messages that addressed other agents their hops (type, to whom), in one
    query."""
    ids = [m["id"] for m in messages if m.get("kind") in (Message.Kind.AGENT, Message.Kind.SYSTEM)]
    if not ids:
        return
    found: dict[int, list[dict[str, str]]] = {}
    rows = (
        Hop.objects.filter(chain__task_id=task_id, message_id__in=ids)
        .order_by("index")
        .values_list("message_id", "kind", "to_agent__name")
    )
    for message_id, kind, to in rows:
        found.setdefault(message_id, []).append(hop_payload(kind=kind, to=to))
    for message in messages:
        if message["id"] in found:
            message["hops"] = found[message["id"]]


def get_task_assumption(access: TaskAccess, assumption_id: int) -> Assumption:
    """An assumption on a task the caller may read (``get_task_access``), or 404."""
    assumption = (
        Assumption.objects.select_related("task", "agent", "question")
        .filter(pk=assumption_id, task=access.task)
        .first()
    )
    if assumption is None:
        raise Http404("No such assumption.")
    return assumption


# --- Lists for the API (the task comes from get_task_access: the reader is a member) ---------


def list_task_questions(task: Task, *, status: str | None = None) -> QuerySet[Question]:
    questions = Question.objects.filter(task=task).select_related("agent", "answered_by")
    return questions.filter(status=status) if status else questions


def list_task_suggestions(task: Task, *, status: str | None = None) -> QuerySet[Suggestion]:
    suggestions = Suggestion.objects.filter(task=task).select_related(
        "agent", "proposed_by", "decided_by"
    )
    return suggestions.filter(status=status) if status else suggestions


def list_task_assumptions(task: Task) -> QuerySet[Assumption]:
    return Assumption.objects.filter(task=task).select_related("agent", "undone_by")


def task_plan(*, task: Task) -> dict[str, Any] | None:
    """The task's plan for its panel: the plan, its steps, the lines that are not steps, and
    whom a step can be given to (the task's agents, the workspace's members). None: no plan."""
    plan = Plan.objects.filter(task=task).select_related("coordinator").first()
    if plan is None:
        return None
    steps = list(
        plan.steps.select_related("agent", "person", "done_by_agent", "done_by_person").order_by(
            "index"
        )
    )
    agents = list(Agent.objects.filter(tasks=task).order_by("name", "id"))
    members = list(
        Membership.objects.filter(workspace_id=task.workspace_id)
        .select_related("user")
        .order_by("user__username")
    )
    choices = [(f"agent:{a.pk}", a.name) for a in agents] + [
        (f"person:{m.user_id}", m.user.get_username()) for m in members
    ]
    for step in steps:
        step.choice = (  # type: ignore[attr-defined]
            f"agent:{step.agent_id}"
            if step.agent_id
            else (f"person:{step.person_id}" if step.person_id else "")
        )
    done = [s for s in steps if s.status == "done"]
    return {
        "plan": plan,
        "steps": steps,
        "choices": choices,
        "done": len(done),
        "problems": plan.problems,
    }


def get_task_plan_step(access: TaskAccess, step_id: int) -> PlanStep:
    """A step of the plan of a task the person can reach (404 otherwise)."""
    step = (
        PlanStep.objects.filter(plan__task=access.task, pk=step_id)
        .select_related("plan__task")
        .first()
    )
    if step is None:
        raise Http404("No such step.")
    return step
