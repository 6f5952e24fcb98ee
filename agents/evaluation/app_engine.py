"""The app engine: simulated people drive the REAL app — workspaces, tasks, chat
``post_message``, question cards, suggestions, agent turns run by a real Celery worker, and the
memory app — and the harness reads back what the agent did.

Per configuration (policy x memory x seed) every simulated person gets a fresh account and a
workspace they own, with one agent ("Eve") using the policy and the model profile; every episode
is a new task. Oracle mode registers the episode's ground truth (``OracleTask``) so the turn
engine's policy gets oracle signals (``signals.py``); real mode leaves the turn engine alone.

The worker: in embedded mode (no REDIS_URL) the in-process worker thread of
collab/core/embedded.py is started for the run and stopped after it; in production a Celery
worker process must be running (``celery -A collab worker``). Never call this inside a Celery
job running on the embedded worker: the agent turns need that same worker.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet

from agents.evaluation.checks import adheres, passes
from agents.evaluation.models import OracleTask
from agents.evaluation.results import EpisodeResult
from agents.evaluation.runner import RunConfig, RunOutput, _owner_marks, start_episode
from agents.evaluation.scenario import Episode, Preference, ScenarioSet
from agents.evaluation.signals import oracle_run
from agents.evaluation.users import (
    AgentOutput,
    AskedQuestion,
    FeedbackKind,
    Reply,
    ScriptedUser,
    feedback_for,
    same_value,
)
from agents.memory import services as memory_services
from agents.memory.models import MemoryItem
from agents.models import (
    Action,
    ActionKind,
    Agent,
    AgentMode,
    Feedback,
    ModelProfile,
    Question,
    Suggestion,
    Turn,
    TurnStatus,
)
from agents.policies.templates import load_templates
from agents.selectors import get_feedback_target
from agents.services import agents as agent_services
from agents.services import feedback as feedback_services
from agents.services import questions as question_services
from agents.services import suggestions as suggestion_services
from collab.tasks import services as task_services
from collab.tasks.models import Document, Task, TaskStatus
from collab.tasks.selectors import get_task_access
from collab.workspaces.models import Membership
from collab.workspaces.services import create_workspace

log = logging.getLogger(__name__)

AGENT_NAME = "Eve"
WAIT_SECONDS = 180.0
POLL_SECONDS = 0.05
MAX_TURNS = 12


class AppEngineError(RuntimeError):
    pass


@contextlib.contextmanager
def worker() -> Iterator[None]:
    """A Celery worker for the run: the embedded thread in embedded mode, else the caller's."""
    if getattr(settings, "REDIS_URL", ""):
        yield
        return
    from collab.core.embedded import start_embedded_worker

    controller = start_embedded_worker()
    try:
        yield
    finally:
        controller.stop(in_sighandler=False)


def _document(task: Task) -> str:
    return Document.objects.filter(task=task).values_list("text", flat=True).first() or ""


def _wait(agent: Agent, task: Task, after_turn: int) -> list[Turn]:
    """Block until every turn of the agent on the task started after `after_turn` has ended
    (done, failed, cancelled or waiting for an answer); return those turns."""
    deadline = time.monotonic() + WAIT_SECONDS
    while True:
        turns = list(Turn.objects.filter(agent=agent, task=task, pk__gt=after_turn).order_by("pk"))
        if turns and not any(t.status in (TurnStatus.QUEUED, TurnStatus.RUNNING) for t in turns):
            return turns
        if time.monotonic() > deadline:
            raise AppEngineError(
                f"no agent turn finished on task {task.pk} within {WAIT_SECONDS:.0f} s "
                "(is a Celery worker running?)"
            )
        time.sleep(POLL_SECONDS)


def _apply(document: str, suggestion: Suggestion) -> str:
    if not suggestion.find:
        return document + suggestion.replace
    return document.replace(suggestion.find, suggestion.replace, 1)


def _values(decisions: list[dict[str, Any]]) -> dict[str, str]:
    values: dict[str, str] = {}
    for record in decisions:
        for slot in (record.get("situation") or {}).get("slots", ()):
            if slot.get("value") and slot.get("source") in (
                "request",
                "chat",
                "document",
                "memory",
            ):
                values[slot["spec"]["name"]] = str(slot["value"])
        for assumption in (record.get("detail") or {}).get("assumptions", ()):
            values.setdefault(str(assumption["slot"]), str(assumption["value"]))
    return values


def read_output(agent: Agent, task: Task, turns: list[Turn]) -> AgentOutput:
    """What the agent did in these turns, as the simulated person sees it."""
    decisions = [t.policy_decision for t in turns if t.policy_decision]
    open_questions = list(
        Question.objects.filter(turn__in=turns, status=Question.Status.OPEN).order_by("pk")
    )
    if open_questions:
        asked = [d for d in decisions if d.get("decision") == "ask"]
        tagged = (asked[-1].get("detail") or {}).get("questions", []) if asked else []
        questions = tuple(AskedQuestion(q["text"], tuple(q.get("slots", ()))) for q in tagged)
        if not questions:
            questions = tuple(AskedQuestion(q.text) for q in open_questions)
        return AgentOutput(
            action="ask", text="\n".join(q.text for q in open_questions), questions=questions
        )
    document = _document(task)
    proposed = list(
        Suggestion.objects.filter(turn__in=turns, status=Suggestion.Status.PROPOSED).order_by("pk")
    )
    text = " ".join(str(d.get("assumption", "")) for d in decisions).strip()
    if proposed:
        for suggestion in proposed:
            document = _apply(document, suggestion)
        return AgentOutput(
            action="suggest", text=text, document=document, values=_values(decisions)
        )
    edited = Action.objects.filter(
        turn__in=turns, kind=ActionKind.EDIT, status=Action.Status.APPLIED
    ).exists()
    if edited:
        return AgentOutput(action="act", text=text, document=document, values=_values(decisions))
    return AgentOutput(action="reply", text=text)


class AppSession:
    """One simulated person's account, workspace and agent for one configuration."""

    def __init__(
        self, *, person: str, token: str, policy: str, profile: ModelProfile | None, memory: bool
    ) -> None:
        user_model = get_user_model()
        self.user: User = user_model.objects.create_user(
            username=f"eval-{token}-{person}"[:150], password=None
        )
        self.workspace = create_workspace(owner=self.user, name=f"Evaluation {token} {person}")
        self.membership = Membership.objects.select_related("workspace", "user").get(
            workspace=self.workspace, user=self.user
        )
        self.agent = agent_services.create_agent(
            membership=self.membership,
            name=AGENT_NAME,
            model_profile=profile,
            policy_name=policy,
            mode=AgentMode.MAY_EDIT,
        )
        if not memory:
            memory_services.update_settings(
                user=self.user, enabled=False, review_mode="auto", admin_access_allowed=False
            )

    def say(self, task: Task, text: str, *, mention: bool) -> None:
        body = f"@{AGENT_NAME} {text}" if mention else text
        task_services.post_message(membership=self.membership, task=task, body=body)


def _send(session: AppSession, task: Task, reply: Reply, output: AgentOutput) -> None:
    """Carry the person's reply out through the services."""
    if reply.kind == "answer":
        question = Question.objects.filter(task=task, status=Question.Status.OPEN).last()
        if question is not None:
            question_services.answer_question(
                membership=session.membership, question=question, answer=reply.text or "-"
            )
            return
    if output.action == "suggest":
        for suggestion in Suggestion.objects.filter(task=task, status=Suggestion.Status.PROPOSED):
            if reply.accepted:
                suggestion_services.accept_suggestion(
                    membership=session.membership, suggestion=suggestion
                )
            else:
                suggestion_services.reject_suggestion(
                    membership=session.membership, suggestion=suggestion
                )
    if reply.ends_episode:
        task_services.set_task_status(
            membership=session.membership, task=task, status=TaskStatus.DONE
        )
        return
    # Each enforcement is its own "Remember that ..." message (the memory app keeps it when
    # memory is on); the corrections and the request to redo go to the agent last.
    sentences = re.split(r"(?<=[.!?])\s+(?=Remember that )", reply.text)
    remembered = [s for s in sentences if s.startswith("Remember that ")]
    rest = " ".join(s for s in sentences if not s.startswith("Remember that ")).strip()
    for sentence in remembered:
        session.say(task, sentence, mention=False)
    session.say(task, rest or "Please redo it with that in mind.", mention=True)


# Which piece of a turn's work the person rates, by what the agent did (users.AgentOutput).
FEEDBACK_TARGETS: dict[str, str] = {
    "ask": Feedback.TargetKind.QUESTION,
    "suggest": Feedback.TargetKind.SUGGESTION,
    "act": Feedback.TargetKind.EDIT,
    "reply": Feedback.TargetKind.MESSAGE,
}


def _target_id(turn: Turn, kind: str) -> int | None:
    """The turn's piece of work of that kind (its last one), if it did such work."""
    rows: QuerySet[Any, Any]
    if kind == Feedback.TargetKind.QUESTION:
        rows = Question.objects.filter(turn=turn).values_list("pk", flat=True)
    elif kind == Feedback.TargetKind.SUGGESTION:
        rows = Suggestion.objects.filter(turn=turn).values_list("pk", flat=True)
    elif kind == Feedback.TargetKind.EDIT:
        rows = Action.objects.filter(
            turn=turn,
            kind=ActionKind.EDIT,
            status=Action.Status.APPLIED,
            result__edited_directly=True,
        ).values_list("pk", flat=True)
    else:
        rows = Action.objects.filter(
            turn=turn, kind=ActionKind.REPLY, status=Action.Status.APPLIED
        ).values_list("result__message_id", flat=True)
    return next((int(pk) for pk in rows.order_by("-pk") if pk), None)


def give_feedback(
    *, session: AppSession, task: Task, turns: list[Turn], output: AgentOutput, kind: FeedbackKind
) -> list[Feedback]:
    """The person's feedback (``users.feedback_for``) on the agent's move, through the real
    ``record_feedback`` service on the target the app shows it on: the question card, the
    suggestion, the direct edit or the agent's chat message. One row per turn that did such
    work (a turn's decision is taught once per row)."""
    target_kind = FEEDBACK_TARGETS[output.action]
    access = get_task_access(session.user, task.pk)
    rows = []
    for turn in turns:
        target_id = _target_id(turn, target_kind)
        if target_id is None:
            continue
        target = get_feedback_target(access, target_kind, target_id)
        if kind == "unnecessary_question":
            row = feedback_services.record_feedback(
                membership=session.membership, target=target, unnecessary=True
            )
        else:
            row = feedback_services.record_feedback(
                membership=session.membership, target=target, rating=kind
            )
        rows.append(row)
    return rows


def play_app_episode(
    *,
    session: AppSession,
    episode: Episode,
    scenarios: ScenarioSet,
    result: EpisodeResult,
    oracle: bool,
    log_event: Callable[..., None],
    held: Sequence[Preference] | None = None,
) -> None:
    """Play one episode through the app. `held`: the preferences the person holds when it
    starts (`PreferenceLedger.held`: a closing remark only once it was said); None: their own
    for the session."""
    user = scenarios.users[episode.user]
    preferences = scenarios.scored(
        episode, user.preferences_in(episode.session) if held is None else held
    )
    person = ScriptedUser(
        user=user, episode=episode, preferences=preferences, today=scenarios.day(episode)
    )
    template = episode.template_def
    result.changed_prefs = [p.id for p in user.changed_in(episode.session)]
    with transaction.atomic():
        task = task_services.create_task(
            membership=session.membership,
            title=episode.task.title,
            goal=episode.task.goal,
            template=episode.task.template or "",  # as a person starting from the template
        )
        agent_services.add_agent_to_task(
            membership=session.membership, agent=session.agent, task=task
        )
        if oracle:
            OracleTask.objects.create(
                task=task,
                episode=scenarios_episode_json(scenarios, episode),
                today=scenarios.day(episode),
            )
    last_turn = Turn.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
    session.say(task, episode.request, mention=True)
    log_event("user", "request", episode.request, task=task.pk)
    first = None
    all_turns: list[Turn] = []
    for _ in range(MAX_TURNS):
        turns = _wait(session.agent, task, last_turn)
        last_turn = turns[-1].pk
        all_turns += turns
        output = read_output(session.agent, task, turns)
        result.agent_turns += 1
        log_event(
            "agent",
            output.action,
            output.text,
            turns=[t.pk for t in turns],
            decision=[t.policy_decision for t in turns],
            document=output.document,
        )
        if output.action in ("act", "suggest") and first is None:
            first = output
            result.first_action = output.action
            result.first_attempt = {
                p.id: adheres(p.check, output.document, before=episode.task.document)
                for p in preferences
                if p.check is not None
            }
            stated = {
                a["slot"]
                for t in turns
                for a in ((t.policy_decision or {}).get("detail") or {}).get("assumptions", ())
            }
            for slot in person.wrong_slots(output):
                result.wrong_first += 1
                used = output.values.get(slot)
                if slot not in stated and (
                    used is None
                    or not same_value(template, slot, used, episode.slots[slot], scenarios.today)
                ):
                    result.silent_wrong += 1
            # as offline (runner.play_episode): values right only when no value used is wrong
            result.first_values_right = (
                not person.wrong_slots(output)
                and not person.failing_checks(output.document)
                and result.wrong_first == 0
            )
            result.first_preferences_right = all(result.first_attempt.values())
            result.first_correct = result.first_values_right and result.first_preferences_right
        if output.action == "ask":
            result.questions += 1
            result.asked = result.asked or first is None
            if first is None:
                result.questions_before_first += 1
        if output.action == "suggest":
            result.suggestions += 1
        reply = person.respond(output)
        if output.action == "ask":
            result.asked_slots += list(reply.asked_slots)
            if first is None:
                result.asked_before_first += list(reply.asked_slots)
            result.redundant += reply.redundant
            result.irrelevant += reply.irrelevant
        if reply.accepted:
            result.suggestions_accepted += 1
        result.corrections += len(reply.wrong_slots)
        result.enforcements += len(reply.enforced)
        if reply.kind != "done":
            result.user_words += reply.words
            result.user_messages += 1
        log_event("user", reply.kind, reply.text, enforced=list(reply.enforced))
        feedback = feedback_for(reply, output)
        for row in give_feedback(
            session=session, task=task, turns=turns, output=output, kind=feedback
        ):
            result.count_feedback(feedback)
            log_event(
                "user",
                "feedback",
                feedback,
                target=row.target_kind,
                target_id=row.target_id,
                turn=row.turn_id,
                reward=row.learned_reward,
            )
        _send(session, task, reply, output)
        result.restated += list(reply.enforced)
        if reply.ends_episode:
            result.gave_up = reply.kind == "give_up"
            # the closing remark goes into the chat (`_send`) only when the person is done
            result.closing_said = reply.kind == "done" and episode.closing is not None
            break
    else:
        result.gave_up = True
    final = _document(task)
    result.values_right = all(passes(c, final) for c in episode.success)
    result.success = not result.gave_up and result.values_right
    result.tokens_in = sum(t.tokens_in for t in all_turns)
    result.tokens_out = sum(t.tokens_out for t in all_turns)
    result.cost = float(sum(t.cost for t in all_turns))
    result.model_calls = sum(t.model_calls.count() for t in all_turns)
    used_ids = [i for t in all_turns for i in (t.context or {}).get("memory_item_ids", ())]
    result.leaked_items = (
        MemoryItem.objects.filter(pk__in=used_ids).exclude(owner=session.user).count()
    )
    marks = {u: p for u, p in _owner_marks(scenarios).items() if u != episode.user}
    result.leaked_documents = sum(
        any(re.search(p, final, re.M) for p in pats) for pats in marks.values()
    )


def scenarios_episode_json(scenarios: ScenarioSet, episode: Episode) -> dict[str, Any]:
    """What the oracle provider reads of an episode (its text and what the text states, in the
    format-1 shape plus where each value is written and an ambiguous phrase's readings)."""
    if not any(raw["id"] == episode.id for raw in scenarios.raw.get("episodes", ())):
        raise AppEngineError(f"episode {episode.id} is not in the scenario file")
    return {
        "id": episode.id,
        "user": episode.user,
        "session": episode.session,
        "task": {
            "title": episode.task.title,
            "template": episode.task.template,
            "goal": episode.task.goal,
            "document": episode.task.document,
        },
        "request": episode.request,
        "slots": dict(episode.slots),
        "stated": dict(episode.stated),
        "clarification": {
            "needed": episode.needs_clarification,
            "slots": list(episode.clarification_slots),
        },
        "success": list(episode.success),
        "sources": dict(episode.sources),
        "readings": {k: list(v) for k, v in episode.readings.items()},
    }


def run_app(
    scenarios: ScenarioSet,
    config: RunConfig,
    *,
    progress: Callable[[int], None] | None = None,
) -> RunOutput:
    """Play every configuration through the real app and a real worker."""
    out = RunOutput(config=config)
    profile = None
    if config.model and config.model != "embedded":
        profile = ModelProfile.objects.filter(name=config.model).first()
        if profile is None:
            raise AppEngineError(f"no model profile named {config.model!r}")
    scenarios = scenarios.only(config.split)
    episodes = scenarios.ordered(config.sessions)[: config.limit]
    custom = sorted({e.task.template for e in episodes if e.task.template} - set(load_templates()))
    if custom:
        raise AppEngineError(
            "the app engine plays shipped templates only; this set defines "
            + ", ".join(custom)
            + " (use the offline engine)"
        )
    oracle = config.mode == "oracle"
    if oracle and settings.REDIS_URL:
        raise AppEngineError(
            "oracle mode through the app needs the in-process worker (embedded mode): the "
            "oracle provider is active only inside this process's evaluation run"
        )
    with worker(), oracle_run() if oracle else contextlib.nullcontext():
        for policy in config.policies:
            name = policy if isinstance(policy, str) else policy.name
            for memory_on in config.memory:
                for seed in range(config.seeds):
                    token = uuid.uuid4().hex[:8]
                    sessions: dict[str, AppSession] = {}
                    # what each person has actually said in this run, as the offline runner
                    # keeps it: a closing remark holds from the session after it was said
                    ledger = scenarios.ledger()
                    for episode in episodes:
                        if episode.user not in sessions:
                            sessions[episode.user] = AppSession(
                                person=episode.user,
                                token=token,
                                policy=name,
                                profile=profile,
                                memory=memory_on,
                            )
                        result, log_event = start_episode(
                            out, policy=name, memory=memory_on, seed=seed, episode=episode
                        )
                        play_app_episode(
                            session=sessions[episode.user],
                            episode=episode,
                            scenarios=scenarios,
                            result=result,
                            oracle=oracle,
                            log_event=log_event,
                            held=ledger.held(episode),
                        )
                        ledger.restated(episode.user, result.restated)
                        if result.closing_said:
                            ledger.closed(episode)
                        out.results.append(result)
                        if progress:
                            progress(1)
    return out
