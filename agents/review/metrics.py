"""Process metrics of tasks and workspaces (definitions in docs/review.md).

Every figure comes from a fixed number of grouped queries, whatever the number of tasks.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db.models import Count, Exists, Max, OuterRef, Q, QuerySet

from agents.models import Action, Feedback, Question, Suggestion, Trigger, Turn, TurnStatus
from agents.review.chains import add_chain_metrics, loops_stopped
from collab.tasks.models import DocumentVersion, Message, Task, TaskStatus, TaskStatusChange

# Turns an agent took without a person asking it: it noticed a message or an idle document, or
# another agent's message addressed it (a hop of a chain, issue 30).
SELF_INITIATED_TRIGGERS = (Trigger.MESSAGE, Trigger.IDLE, Trigger.AGENT)
STOPPED_PREFIX = "Stopped by "


@dataclass(frozen=True)
class Share:
    key: str  # "person:<id or name>" or "agent:<id>"
    label: str
    kind: str  # "person" or "agent"
    count: int
    share: float


@dataclass
class Metrics:
    """Process metrics of one task, or of a set of tasks added up."""

    initiative: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    questions_asked: int = 0
    questions_answered: int = 0
    suggestions: Counter[str] = field(default_factory=Counter)
    stops: int = 0
    time_to_done: timedelta | None = None
    thumbs_up: int = 0
    thumbs_down: int = 0
    unnecessary_questions: int = 0
    # Chains of agents addressing agents (issue 30; agents/review/chains.py)
    chains: int = 0
    hops: int = 0
    guards_tripped: Counter[str] = field(default_factory=Counter)
    chain_interventions: int = 0  # people's messages that answered a guard's stop
    agent_work: int = 0  # agents' turns that applied at least one action, whatever started them
    # The shared plan (ADR 0024): its steps, and who decided each done one was done
    plan_steps: int = 0
    steps_done_by_people: int = 0
    steps_done_by_agents: int = 0

    @property
    def steps_done(self) -> int:
        return self.steps_done_by_people + self.steps_done_by_agents

    @property
    def step_share_people(self) -> float | None:
        return self.steps_done_by_people / self.steps_done if self.steps_done else None

    @property
    def step_share_agents(self) -> float | None:
        return self.steps_done_by_agents / self.steps_done if self.steps_done else None

    @property
    def hops_per_chain(self) -> float | None:
        return self.hops / self.chains if self.chains else None

    @property
    def guards_tripped_total(self) -> int:
        return sum(self.guards_tripped.values())

    @property
    def guards_tripped_by_name(self) -> list[tuple[str, int]]:
        """For templates (a Counter answers ``.items`` with a count of 0)."""
        return sorted(self.guards_tripped.items())

    @property
    def loops_stopped(self) -> int:
        return loops_stopped(self.guards_tripped)

    @property
    def interventions(self) -> int:
        """People stepping in: a Stop (one per chain), or a message answering a guard's stop."""
        return self.stops + self.chain_interventions

    @property
    def people_work(self) -> int:
        return sum(n for (_, _, kind), n in self.initiative.items() if kind == "person")

    @property
    def people_work_share(self) -> float | None:
        total = self.people_work + self.agent_work
        return self.people_work / total if total else None

    @property
    def agent_work_share(self) -> float | None:
        share = self.people_work_share
        return None if share is None else 1 - share

    @property
    def shares(self) -> list[Share]:
        total = sum(self.initiative.values())
        return [
            Share(key=key, label=label, kind=kind, count=count, share=count / total)
            for (key, label, kind), count in sorted(
                self.initiative.items(), key=lambda item: (-item[1], item[0][1])
            )
            if total
        ]

    @property
    def entropy(self) -> float:
        return initiative_entropy(self.initiative.values())

    @property
    def normalized_entropy(self) -> float | None:
        participants = sum(1 for count in self.initiative.values() if count > 0)
        if participants < 2:
            return None
        return self.entropy / math.log2(participants)

    @property
    def suggestions_accepted(self) -> int:
        return self.suggestions[Suggestion.Status.ACCEPTED]

    @property
    def suggestions_edited(self) -> int:
        return self.suggestions[Suggestion.Status.EDITED]

    @property
    def suggestions_rejected(self) -> int:
        return self.suggestions[Suggestion.Status.REJECTED]

    @property
    def suggestions_total(self) -> int:
        return sum(self.suggestions.values())

    def add(self, other: Metrics) -> None:
        self.initiative.update(other.initiative)
        self.questions_asked += other.questions_asked
        self.questions_answered += other.questions_answered
        self.suggestions.update(other.suggestions)
        self.stops += other.stops
        self.thumbs_up += other.thumbs_up
        self.thumbs_down += other.thumbs_down
        self.unnecessary_questions += other.unnecessary_questions
        self.chains += other.chains
        self.hops += other.hops
        self.guards_tripped.update(other.guards_tripped)
        self.chain_interventions += other.chain_interventions
        self.agent_work += other.agent_work
        self.plan_steps += other.plan_steps
        self.steps_done_by_people += other.steps_done_by_people
        self.steps_done_by_agents += other.steps_done_by_agents


def initiative_entropy(counts: Iterable[int]) -> float:
    """Shannon entropy in bits of the initiative distribution: 0 when one participant takes
    every initiative, log2(n) when n participants take equal shares."""
    values = [count for count in counts if count > 0]
    total = sum(values)
    if total == 0:
        return 0.0
    return -sum((c / total) * math.log2(c / total) for c in values) + 0.0


@dataclass
class WorkspaceMetrics:
    tasks: list[tuple[Task, Metrics]]
    total: Metrics
    median_time_to_done: timedelta | None


def _person_key(user_id: int | None, label: str) -> tuple[str, str, str]:
    return (f"person:{user_id if user_id is not None else label}", label, "person")


def compute_metrics(tasks: QuerySet[Task]) -> dict[int, Metrics]:
    """Metrics of each task in ``tasks``, keyed by task id (ten queries in all, eleven when a
    guard stopped a chain)."""
    task_list = list(tasks.only("id", "status", "created_at", "updated_at", "workspace_id"))
    task_ids = [task.pk for task in task_list]
    result: dict[int, Metrics] = {task.pk: Metrics() for task in task_list}
    if not task_ids:
        return result
    users = get_user_model()
    usernames: dict[int, str] = {}

    # 1. people's messages
    rows = (
        Message.objects.filter(task_id__in=task_ids, kind=Message.Kind.HUMAN)
        .values("task_id", "author_id", "author_name")
        .annotate(n=Count("id"))
    )
    for row in rows:
        key = _person_key(row["author_id"], row["author_name"])
        result[row["task_id"]].initiative[key] += row["n"]
        if row["author_id"] is not None:
            usernames.setdefault(row["author_id"], row["author_name"])

    # 2. people's editing sessions (each document version credits each person who changed it)
    version_rows = DocumentVersion.objects.filter(
        document__task_id__in=task_ids,
        kind__in=[DocumentVersion.Kind.EDITS, DocumentVersion.Kind.BEFORE_DELETION],
    ).values_list("document__task_id", "authors")
    authored: dict[int, Counter[str]] = defaultdict(Counter)
    for task_id, authors in version_rows:
        for label in authors or []:
            if isinstance(label, str) and "(agent" not in label:
                authored[task_id][label] += 1
    # 3. the people behind the labels
    labels = {label for counter in authored.values() for label in counter}
    by_name = dict(users.objects.filter(username__in=labels).values_list("username", "id"))
    for task_id, counter in authored.items():
        for label, n in counter.items():
            result[task_id].initiative[_person_key(by_name.get(label), label)] += n

    # 4. turns: agents' own initiative, people's "Ask" presses, and stops
    acted = Action.objects.filter(turn=OuterRef("pk"), status=Action.Status.APPLIED)
    turn_rows = (
        Turn.objects.filter(task_id__in=task_ids)
        .annotate(acted=Exists(acted))
        .values(
            "task_id",
            "agent_id",
            "agent__name",
            "trigger",
            "status",
            "acted",
            "requested_by_id",
            "requested_by__username",
            "error",
            "chain_id",
        )
    )
    stopped_chains: set[int] = set()
    for row in turn_rows:
        metrics = result[row["task_id"]]
        metrics.agent_work += int(row["acted"])
        if row["trigger"] in SELF_INITIATED_TRIGGERS and row["acted"]:
            agent_key = (f"agent:{row['agent_id']}", row["agent__name"], "agent")
            metrics.initiative[agent_key] += 1
        if row["trigger"] == Trigger.ASK and row["requested_by_id"] is not None:
            key = _person_key(row["requested_by_id"], row["requested_by__username"])
            metrics.initiative[key] += 1
        if row["status"] == TurnStatus.CANCELLED and row["error"].startswith(STOPPED_PREFIX):
            # One Stop cancels every pending turn of a chain: one intervention per chain.
            if row["chain_id"] is None:
                metrics.stops += 1
            elif row["chain_id"] not in stopped_chains:
                stopped_chains.add(row["chain_id"])
                metrics.stops += 1

    # 5. questions
    for row in (
        Question.objects.filter(task_id__in=task_ids)
        .values("task_id", "status")
        .annotate(n=Count("id"))
    ):
        result[row["task_id"]].questions_asked += row["n"]
        if row["status"] == Question.Status.ANSWERED:
            result[row["task_id"]].questions_answered += row["n"]

    # 6. suggestions and their fate
    for row in (
        Suggestion.objects.filter(task_id__in=task_ids)
        .values("task_id", "status")
        .annotate(n=Count("id"))
    ):
        result[row["task_id"]].suggestions[row["status"]] += row["n"]

    # 7. feedback on agent work: thumbs (current ratings) and questions marked unnecessary
    for row in (
        Feedback.objects.filter(task_id__in=task_ids)
        .values("task_id")
        .annotate(
            up=Count("id", filter=Q(rating=Feedback.Rating.UP)),
            down=Count("id", filter=Q(rating=Feedback.Rating.DOWN)),
            unnecessary=Count("id", filter=Q(unnecessary_question=True)),
        )
        .order_by()
    ):
        metrics = result[row["task_id"]]
        metrics.thumbs_up += row["up"]
        metrics.thumbs_down += row["down"]
        metrics.unnecessary_questions += row["unnecessary"]

    # 8. time to done: from creation to the latest change to done (tasks/TaskStatusChange)
    done = [task for task in task_list if task.status == TaskStatus.DONE]
    finished = (
        dict(
            TaskStatusChange.objects.filter(task__in=done, to_status=TaskStatus.DONE)
            .values("task_id")
            .annotate(at=Max("changed_at"))
            .values_list("task_id", "at")
            .order_by()
        )
        if done
        else {}
    )
    for task in done:
        if task.pk in finished:
            result[task.pk].time_to_done = finished[task.pk] - task.created_at
    # 9-11. chains of agents: hops, guards tripped, people's interventions
    add_chain_metrics(result, task_ids)
    _relabel(result, usernames)
    return result


def _relabel(result: Mapping[int, Metrics], usernames: Mapping[int, str]) -> None:
    """Messages carry display names; show one label per person."""
    for metrics in result.values():
        merged: Counter[tuple[str, str, str]] = Counter()
        for (key, label, kind), n in metrics.initiative.items():
            if kind == "person" and key.startswith("person:") and key[7:].isdigit():
                label = usernames.get(int(key[7:]), label)
            merged[(key, label, kind)] += n
        # the same person may appear under two labels: keep the first label seen per key
        first: dict[str, tuple[str, str, str]] = {}
        combined: Counter[tuple[str, str, str]] = Counter()
        for item, n in merged.items():
            combined[first.setdefault(item[0], item)] += n
        metrics.initiative = combined


def _median(values: list[timedelta]) -> timedelta | None:
    if not values:
        return None
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[middle]
    return (ordered[middle - 1] + ordered[middle]) / 2


def workspace_metrics(tasks: QuerySet[Task]) -> WorkspaceMetrics:
    per_task = compute_metrics(tasks)
    ordered = list(tasks.order_by("-updated_at", "-id"))
    total = Metrics()
    for metrics in per_task.values():
        total.add(metrics)
    durations = [m.time_to_done for m in per_task.values() if m.time_to_done is not None]
    return WorkspaceMetrics(
        tasks=[(task, per_task[task.pk]) for task in ordered if task.pk in per_task],
        total=total,
        median_time_to_done=_median(durations),
    )
