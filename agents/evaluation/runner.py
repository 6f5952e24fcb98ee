"""Play scenario sets: simulated people against an agent, episode by episode, recording the full
event log and an EpisodeResult per episode; then the metrics per configuration.

Engines: "offline" (the policies and memory in this process, see offline.py) and "app" (the real
services and a real Celery worker, see app_engine.py). Both drive the same simulated users.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.evaluation.checks import passes
from agents.evaluation.metrics import summarise
from agents.evaluation.offline import Memory, ModelSignals, OfflineAgent, OracleSignals
from agents.evaluation.results import EpisodeResult
from agents.evaluation.scenario import Episode, Preference, ScenarioSet
from agents.evaluation.users import (
    AgentOutput,
    LLMUser,
    ScriptedUser,
    feedback_for,
    same_value,
)
from agents.policies.base import Policy
from agents.policies.templates import get_template

MAX_TURNS = 12


@dataclass
class RunConfig:
    policies: Sequence[str | Policy]
    mode: str = "oracle"  # "oracle" | "real"
    memory: Sequence[bool] = (True,)
    seeds: int = 1
    sessions: int | None = None
    engine: str = "offline"
    model: str = ""  # model profile name (real signals / LLM user / app engine)
    user: str = "scripted"  # "scripted" | "llm"
    price_per_1k_tokens: float = 0.0


@dataclass
class RunOutput:
    config: RunConfig
    results: list[EpisodeResult] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    def summaries(self) -> list[dict[str, Any]]:
        groups: dict[tuple[str, bool], list[EpisodeResult]] = {}
        for r in self.results:
            groups.setdefault((r.policy, r.memory), []).append(r)
        return [
            {"policy": p, "memory": m, "metrics": summarise(rs, seeds=self.config.seeds)}
            for (p, m), rs in groups.items()
        ]


def _owner_marks(scenarios: ScenarioSet) -> dict[str, list[str]]:
    """Per person, the regex checks that name them (an "Owner: Ana" line): a document for
    someone else that carries one leaks that person's preference."""
    marks: dict[str, list[str]] = {}
    for user in scenarios.users.values():
        prefs = [*user.preferences, *(c.preference for c in user.changes)]
        marks[user.id] = [
            str(p.check["pattern"])
            for p in prefs
            if p.check["type"] == "regex" and user.name in str(p.check["pattern"])
        ]
    return marks


def play_episode(
    *,
    agent: OfflineAgent,
    episode: Episode,
    scenarios: ScenarioSet,
    result: EpisodeResult,
    log: Callable[..., None],
    make_user: Callable[..., ScriptedUser] = ScriptedUser,
) -> None:
    user = scenarios.users[episode.user]
    preferences = user.preferences_in(episode.session)
    person = make_user(user=user, episode=episode, preferences=preferences, today=scenarios.today)
    template = get_template(episode.task.template) if episode.task.template else None
    marks = {uid: pats for uid, pats in _owner_marks(scenarios).items() if uid != episode.user}
    result.changed_prefs = [p.id for p in user.changed_in(episode.session)]
    agent.start(episode)
    log("user", "request", episode.request)
    first_document: AgentOutput | None = None
    last_document = episode.task.document
    for _ in range(MAX_TURNS):
        record = agent.turn()
        output = record.output
        result.agent_turns += 1
        result.leaked_items += sum(owner != episode.user for owner in record.memory_owners)
        log("agent", output.action, output.text, decision=record.decision, document=output.document)
        if output.action in ("act", "suggest") and first_document is None:
            first_document = output
            result.first_action = output.action
            result.first_attempt = {p.id: passes(p.check, output.document) for p in preferences}
            stated = {a["slot"] for a in record.decision.get("assumptions", ())}
            for slot, value in episode.slots.items():
                used = output.values.get(slot)
                if used is None or same_value(template, slot, used, value, scenarios.today):
                    continue
                result.wrong_first += 1
                if slot not in stated:
                    result.silent_wrong += 1
        if output.action == "ask":
            result.questions += 1
            if first_document is None:
                result.asked = True
        if output.action == "suggest":
            result.suggestions += 1
        if output.action == "act":
            last_document = output.document
        reply = person.respond(output)
        if output.action == "ask":
            result.asked_slots += list(reply.asked_slots)
            if first_document is None:
                result.asked_before_first += list(reply.asked_slots)
            result.redundant += reply.redundant
            result.irrelevant += reply.irrelevant
        if reply.accepted:
            result.suggestions_accepted += 1
            last_document = output.document
        result.corrections += len(reply.wrong_slots)
        result.enforcements += len(reply.enforced)
        if reply.kind != "done":
            result.user_words += reply.words
            result.user_messages += 1
        log("user", reply.kind, reply.text, answers=reply.answers, enforced=list(reply.enforced))
        feedback = feedback_for(reply, output)
        result.count_feedback(feedback)
        reward = agent.feedback(feedback)
        log("user", "feedback", feedback, target=output.action, reward=reward)
        if reply.ends_episode:
            result.gave_up = reply.kind == "give_up"
            break
        agent.hear(reply, output, preferences)
    else:
        result.gave_up = True
    result.success = not result.gave_up and all(passes(c, last_document) for c in episode.success)
    result.leaked_documents = sum(
        any(re.search(p, last_document, re.M) for p in pats) for pats in marks.values()
    )


def _user_factory(config: RunConfig, chat_model: Any) -> Callable[..., ScriptedUser]:
    if config.user != "llm":
        return ScriptedUser

    def make(**kwargs: Any) -> ScriptedUser:
        return LLMUser(chat_model=chat_model, **kwargs)

    return make


def start_episode(
    out: RunOutput, *, policy: str, memory: bool, seed: int, episode: Episode
) -> tuple[EpisodeResult, Callable[..., None]]:
    """The record of one episode played by a configuration, and the function that logs its
    events into ``out.events`` (both engines)."""
    result = EpisodeResult(
        policy=policy,
        seed=seed,
        memory=memory,
        episode=episode.id,
        user=episode.user,
        session=episode.session,
        template=episode.task.template,
        needs_clarification=episode.needs_clarification,
        blockers=list(episode.clarification_slots),
    )
    context = {
        "policy": policy,
        "memory": memory,
        "seed": seed,
        "episode": episode.id,
        "session": episode.session,
    }

    def log(actor: str, kind: str, text: str, **data: Any) -> None:
        out.events.append({**context, "actor": actor, "kind": kind, "text": text, **data})

    return result, log


def run_offline(
    scenarios: ScenarioSet,
    config: RunConfig,
    *,
    chat_model: Any = None,
    progress: Callable[[int], None] | None = None,
) -> RunOutput:
    """Play every configuration (policy x memory x seed) over the scenario set."""
    out = RunOutput(config=config)
    episodes = scenarios.ordered(config.sessions)
    make_user = _user_factory(config, chat_model)
    answers: dict[tuple[str, str], Any] = {}  # real signals, shared by every configuration
    for policy in config.policies:
        for memory_on in config.memory:
            for seed in range(config.seeds):
                signals = (
                    ModelSignals(chat_model, answers=answers)
                    if config.mode == "real"
                    else OracleSignals()
                )
                name = policy if isinstance(policy, str) else policy.name
                agent = OfflineAgent(
                    policy=policy,
                    signals=signals,
                    today=scenarios.today,
                    memory=Memory() if memory_on else None,
                    seed=seed,
                )
                for episode in episodes:
                    result, log = start_episode(
                        out, policy=name, memory=memory_on, seed=seed, episode=episode
                    )
                    before = _usage(signals)
                    play_episode(
                        agent=agent,
                        episode=episode,
                        scenarios=scenarios,
                        result=result,
                        log=log,
                        make_user=make_user,
                    )
                    after = _usage(signals)
                    result.model_calls = after[0] - before[0]
                    result.tokens_in = after[1] - before[1]
                    result.tokens_out = after[2] - before[2]
                    result.cost = (
                        (result.tokens_in + result.tokens_out) / 1000 * config.price_per_1k_tokens
                    )
                    out.results.append(result)
                    if progress:
                        progress(1)
    return out


def _usage(signals: object) -> tuple[int, int, int]:
    usage = getattr(signals, "usage", None)
    if usage is None:
        return (0, 0, 0)
    return (usage.calls, usage.tokens_in, usage.tokens_out)


def total_episodes(scenarios: ScenarioSet, config: RunConfig) -> int:
    return (
        len(scenarios.ordered(config.sessions))
        * len(config.policies)
        * len(config.memory)
        * config.seeds
    )


def preference_ids(preferences: Iterable[Preference]) -> list[str]:
    return [p.id for p in preferences]
