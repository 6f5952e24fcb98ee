"""The multi-agent evaluation (issue 30, part 5): teams of agents of different roles and a
simulated person on the REAL app — workspaces, tasks, ``post_message``, hops, guards, the
shared plan, suggestions, question cards — against one agent on the same scenarios.

Each episode with a ``team`` (scenario format 2, ``scenarios/teams/``) is played once per
configuration, each in a fresh workspace and task:

* ``team``: the scenario's agents (a writer and a reviewer, a coordinator and two workers, a
  pair that hands the same work back and forth), with the guards as shipped;
* ``single``: one skills agent ("Solo") on the same task, every @name of the team in the
  person's messages replaced by its own;
* ``trivial:echo`` (a counter-example): one agent that only echoes the person's message;
* ``unguarded`` (a counter-example): the team with the chain guards switched off
  (``guards.check`` answers "no trip" for the run), to show what the guards stop.

The jobs the services send (turns, the plan's sync, a failed hop's report) run in this process
in the order they were sent, one at a time, as a single worker would (``Dispatcher``): jobs
with a countdown (a question's timeout, the idle document) are not run, so an episode never
depends on time. At most ``MAX_JOBS`` jobs run per episode; a chain still going then is cut by
the harness (counted: ``cut``).

The simulated person (``TeamPerson``) reads only what the app shows: open question cards,
proposed suggestions, the agents' chat messages and the plan's steps. It answers a question
or a message that names a value it knows (the episode's ``slots``) with that value, accepts
proposed suggestions, ticks the plan steps given to it, and stops when nothing asks for it.
Success is judged from the outcome (``team_metrics.judge``), never from a label an agent
produced: the final document against the episode's ``success`` checks, the chat against the
team's ``checks``, the plan's boxes as the document shows them, and the hop records.
"""

from __future__ import annotations

import contextlib
import re
import uuid
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest import mock

from celery import current_app
from django.contrib.auth import get_user_model
from django.db import transaction

from agents.chains import guards
from agents.engine import runner
from agents.evaluation.scenario import Episode, ScenarioSet
from agents.models import (
    Agent,
    ModelProfile,
    PlanStep,
    Provider,
    Question,
    Suggestion,
    Turn,
    TurnStatus,
)
from agents.outbox import enqueue
from agents.services import agents as agent_services
from agents.services import plans as plan_services
from agents.services import questions as question_services
from agents.services import suggestions as suggestion_services
from collab.tasks import documents
from collab.tasks import services as task_services
from collab.tasks.models import Message, Task
from collab.workspaces.models import Membership
from collab.workspaces.services import create_workspace

TEAM_SCENARIOS = Path(__file__).resolve().parent / "scenarios" / "teams" / "multi-agent.json"
CONFIGS = ("team", "single", "trivial:echo", "unguarded")
COUNTER_EXAMPLES = frozenset({"trivial:echo", "unguarded"})
SOLO = "Solo"
MAX_JOBS = 40  # jobs per episode: a chain the guards do not stop is cut here
MAX_ROUNDS = 8  # the person's rounds (their patience)
_MENTION = re.compile(r"(?<![\w@])@([A-Za-z][A-Za-z0-9_-]{0,31})")


# --- Jobs ----------------------------------------------------------------------------------


@dataclass
class Dispatcher:
    """Holds the jobs the services send (``enqueue.send_job``) and runs them in order here."""

    queue: deque[tuple[str, tuple[Any, ...]]] = field(default_factory=deque)
    later: list[str] = field(default_factory=list)  # countdown jobs, not run
    ran: int = 0
    cut: int = 0

    def send(self, name: str, *args: Any, countdown: float | None = None) -> bool:
        if countdown:
            self.later.append(name)
        else:
            self.queue.append((name, args))
        return True

    def drain(self, budget: int) -> int:
        """Run the queued jobs oldest first until none is left or ``budget`` jobs ran (then
        the turns still queued are cut: cancelled by the harness). Returns the jobs run."""
        ran = 0
        while self.queue:
            if ran >= budget:
                self.cut += _cut_queued()
                self.queue.clear()
                break
            name, args = self.queue.popleft()
            if name == enqueue.RUN_TURN:
                runner.run_turn(turn_id=int(args[0]))
            elif name != enqueue.SWEEP:
                current_app.tasks[name](*args)
            ran += 1
        self.ran += ran
        return ran


def _cut_queued() -> int:
    return Turn.objects.filter(status=TurnStatus.QUEUED).update(status=TurnStatus.CANCELLED)


@contextlib.contextmanager
def dispatching(dispatcher: Dispatcher, *, guarded: bool) -> Iterator[Dispatcher]:
    """Jobs go to ``dispatcher`` for the block; ``guarded=False`` switches the chain guards
    off (the ``unguarded`` counter-example only)."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(mock.patch.object(enqueue, "send_job", dispatcher.send))
        if not guarded:
            stack.enter_context(mock.patch.object(guards, "check", return_value=None))
        yield dispatcher


# --- The simulated person ------------------------------------------------------------------


@dataclass
class Knowing:
    """What the person knows and how they say it: per slot, its value and the words that name
    it (its template label and aliases, its name)."""

    values: dict[str, str]
    names: dict[str, tuple[str, ...]]
    replies: dict[str, str]
    hidden: frozenset[str] = frozenset()  # what only the person knows (the request omits it)

    @classmethod
    def of(cls, episode: Episode) -> Knowing:
        template = episode.template_def
        names: dict[str, tuple[str, ...]] = {}
        for slot in episode.slots:
            spec = template.slot(slot) if template is not None else None
            words = {slot.replace("_", " ")}
            if spec is not None:
                words |= {spec.label, *spec.aliases}
            names[slot] = tuple(sorted(w.casefold() for w in words if w and len(w) > 2))
        return cls(
            dict(episode.slots), names, dict(episode.slot_replies), frozenset(episode.hidden)
        )

    def named_in(self, text: str) -> list[str]:
        low = text.casefold()
        return [
            slot
            for slot, words in self.names.items()
            if any(re.search(rf"\b{re.escape(w)}\b", low) for w in words)
        ]

    def say(self, slot: str) -> str:
        reply = self.replies.get(slot)
        if reply:
            return reply
        label = self.names[slot][0] if self.names[slot] else slot
        return f"The {label} is {self.values[slot]}."


def solo_request(text: str, team: Sequence[str]) -> str:
    """The person's message to a single agent: the first @name of the team becomes @Solo, the
    others "Solo" (no @: the agent is not asked to hand anything to itself)."""
    names = {n.lower() for n in team}
    seen: list[bool] = []

    def swap(match: re.Match[str]) -> str:
        if match[1].lower() not in names:
            return match[0]
        first = not seen
        seen.append(True)
        return f"@{SOLO}" if first else SOLO

    return _MENTION.sub(swap, text)


@dataclass
class Played:
    """One episode played by one configuration: its task and what the harness counted."""

    config: str
    episode: str
    flow: str
    task_id: int
    agents: list[str]
    writer: str
    jobs: int = 0
    cut: int = 0
    rounds: int = 0
    events: list[dict[str, Any]] = field(default_factory=list)


class TeamPerson:
    """Plays the person of one episode through the services (see the module docstring)."""

    def __init__(self, *, membership: Membership, task: Task, episode: Episode, writer: str):
        self.membership = membership
        self.task = task
        self.knowing = Knowing.of(episode)
        self.writer = writer
        self.told: set[str] = set()
        self.seen_message = 0

    def act(self, log: Callable[..., None]) -> int:
        """One round: everything that asks for the person; returns how many things they did."""
        did = 0
        for question in Question.objects.filter(task=self.task, status=Question.Status.OPEN):
            slots = [s for s in self.knowing.named_in(question.text) if s not in self.told]
            answer = " ".join(self.knowing.say(s) for s in slots) or "No preference: your call."
            self.told |= set(slots)
            question_services.answer_question(
                membership=self.membership, question=question, answer=answer
            )
            log("person", "answer", answer, question=question.pk)
            did += 1
        for suggestion in Suggestion.objects.filter(
            task=self.task, status=Suggestion.Status.PROPOSED
        ).order_by("pk"):
            suggestion_services.accept_suggestion(membership=self.membership, suggestion=suggestion)
            log("person", "accept", suggestion.replace[:200], suggestion=suggestion.pk)
            did += 1
        messages = list(
            Message.objects.filter(
                task=self.task, kind=Message.Kind.AGENT, pk__gt=self.seen_message
            ).order_by("pk")
        )
        if messages:
            self.seen_message = messages[-1].pk
        named = [s for m in messages for s in self.knowing.named_in(m.body)]
        missing = [
            s for s in dict.fromkeys(named) if s not in self.told and s in self.knowing.hidden
        ]
        if missing:
            self.told |= set(missing)
            body = f"@{self.writer} " + " ".join(self.knowing.say(s) for s in missing)
            body += " Please draft it again with that."
            task_services.post_message(membership=self.membership, task=self.task, body=body)
            log("person", "tell", body)
            did += 1
        for step in PlanStep.objects.filter(
            plan__task=self.task, person=self.membership.user, status="todo"
        ):
            plan_services.tick_step(membership=self.membership, step=step, done=True)
            log("person", "tick", step.text)
            did += 1
        return did


# --- Playing -------------------------------------------------------------------------------


def _profile(behaviour: str, token: str) -> ModelProfile:
    profile, _ = ModelProfile.objects.get_or_create(
        name=f"eval-{token}-fake-{behaviour}"[:80],
        defaults={"provider": Provider.FAKE, "model": behaviour},
    )
    return profile


def _agents_for(config: str, episode: Episode) -> list[dict[str, Any]]:
    team = episode.team or {}
    if config in ("team", "unguarded"):
        return list(team["agents"])
    if config == "trivial:echo":
        return [{"name": SOLO, "role": "writer", "engine": "fake:echo"}]
    return [{"name": SOLO, "role": "writer", "engine": "skills"}]


def play(
    *, config: str, episode: Episode, token: str, log_event: Callable[..., None] | None = None
) -> Played:
    """Play ``episode`` with ``config`` in a fresh workspace; returns what was played (the
    figures come from its records: ``team_metrics``)."""
    team = episode.team or {}
    user = get_user_model().objects.create_user(
        username=f"eval-{token}-{config.replace(':', '-')}-{episode.id}"[:150], password=None
    )
    workspace = create_workspace(owner=user, name=f"Multi-agent {token} {episode.id}"[:100])
    membership = Membership.objects.select_related("workspace", "user").get(
        workspace=workspace, user=user
    )
    specs = _agents_for(config, episode)
    dispatcher = Dispatcher()
    with dispatching(dispatcher, guarded=config != "unguarded"), transaction.atomic():
        task = task_services.create_task(
            membership=membership,
            title=episode.task.title,
            goal=episode.task.goal,
            template=episode.task.template or "",
        )
        for agent in list(Agent.objects.filter(tasks=task)):  # the workspace's default agent
            agent_services.remove_agent_from_task(membership=membership, agent=agent, task=task)
        for spec in specs:
            engine = str(spec.get("engine") or "skills")
            profile = _profile(engine.split(":", 1)[1], token) if engine != "skills" else None
            agent = agent_services.create_agent(
                membership=membership,
                name=spec["name"],
                instructions=spec.get("instructions", ""),
                model_profile=profile,
            )
            agent_services.add_agent_to_task(membership=membership, agent=agent, task=task)
        if episode.task.document:
            documents.replace_in_document(
                task=task,
                find="",
                replace=episode.task.document,
                author_label=user.get_username(),
                author=user,
            )
    writer = next((s["name"] for s in specs if s.get("role") == "writer"), specs[0]["name"])
    played = Played(
        config=config,
        episode=episode.id,
        flow=str(team.get("flow", "")),
        task_id=task.pk,
        agents=[s["name"] for s in specs],
        writer=writer,
    )

    def log(actor: str, kind: str, text: str, **data: Any) -> None:
        event = {"config": config, "episode": episode.id, "actor": actor, "kind": kind}
        event.update(text=text, **data)
        played.events.append(event)
        if log_event is not None:
            log_event(event)

    person = TeamPerson(membership=membership, task=task, episode=episode, writer=writer)
    request = episode.request
    if config not in ("team", "unguarded"):
        request = solo_request(request, [s["name"] for s in team.get("agents", ())])
    with dispatching(dispatcher, guarded=config != "unguarded"):
        task_services.post_message(membership=membership, task=task, body=request)
        log("person", "request", request)
        for _ in range(MAX_ROUNDS):
            left = MAX_JOBS - dispatcher.ran
            dispatcher.drain(max(left, 0))
            played.rounds += 1
            if dispatcher.ran >= MAX_JOBS or not person.act(log):
                break
        dispatcher.drain(max(MAX_JOBS - dispatcher.ran, 0))
    played.jobs, played.cut = dispatcher.ran, dispatcher.cut
    return played


def team_episodes(scenarios: ScenarioSet) -> list[Episode]:
    return [e for e in scenarios.episodes if e.team]


def run_teams(
    scenarios: ScenarioSet,
    *,
    configs: Sequence[str] = CONFIGS,
    progress: Callable[[int], None] | None = None,
    log_event: Callable[..., None] | None = None,
) -> list[Played]:
    """Play every team episode of the set with each configuration."""
    token = uuid.uuid4().hex[:8]
    out = []
    for config in configs:
        if config not in CONFIGS:
            raise ValueError(f"unknown configuration {config!r}; choose from {CONFIGS}")
        for episode in team_episodes(scenarios):
            out.append(play(config=config, episode=episode, token=token, log_event=log_event))
            if progress is not None:
                progress(1)
    return out
