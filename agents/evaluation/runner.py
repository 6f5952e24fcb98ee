"""Play scenario sets: simulated people against an agent, episode by episode, recording the full
event log and an EpisodeResult per episode; then the metrics per configuration.

Engines: "offline" (the product's policy entry point and a simulated memory in this process, see
offline.py) and "app" (the real services and a real Celery worker, see app_engine.py). Both drive
the same simulated users. Modes (offline): "detectors" (the headline: no model, no ground truth),
"real" (a model's signals), "oracle" (a perfect reader: an upper bound).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agents.evaluation.checks import adheres, passes
from agents.evaluation.metrics import summarise
from agents.evaluation.offline import MemoryStore, ModelSignals, OfflineAgent, OracleSignals
from agents.evaluation.results import EpisodeResult
from agents.evaluation.scenario import Episode, Preference, ScenarioSet
from agents.evaluation.turn_context import registered_templates
from agents.evaluation.users import (
    AgentOutput,
    LLMUser,
    ScriptedUser,
    asking_limit,
    feedback_for,
    same_value,
)
from agents.policies.registry import Policy
from agents.policies.templates import TaskTemplate

MAX_TURNS = 12


@dataclass
class RunConfig:
    policies: Sequence[str | Policy]
    mode: str = "detectors"  # "detectors" | "real" | "oracle"
    memory: Sequence[bool] = (True,)
    seeds: int = 1
    sessions: int | None = None
    engine: str = "offline"
    model: str = ""  # model profile name (real signals / LLM user / app engine)
    user: str = "scripted"  # "scripted" | "llm"
    price_per_1k_tokens: float = 0.0
    signal_noise: float = 0.0  # oracle mode: see OracleSignals
    split: str = ""  # the split played ("dev" / "test"; "" = the whole file)
    endpoint: str = ""  # real mode: where the model answers (for errors and the report)
    limit: int | None = None  # play only the first N episodes (in play order)


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
            if p.check is not None
            and p.check["type"] == "regex"
            and user.name in str(p.check["pattern"])
        ]
    return marks


def _all_preferences(scenarios: ScenarioSet) -> dict[str, list[Preference]]:
    """Every preference each person ever holds or states in the set."""
    out: dict[str, list[Preference]] = {u: [] for u in scenarios.users}
    for user in scenarios.users.values():
        out[user.id] += [*user.preferences, *(c.preference for c in user.changes)]
    for episode in scenarios.episodes:
        out[episode.user] += list(episode.announces)
        if episode.closing is not None:
            out[episode.user].append(episode.closing.preference)
    return out


_DISTINCT = ("contains", "regex", "heading_present")


def leaked_content(
    document: str,
    requester: str,
    held: Sequence[Preference],
    others: Mapping[str, Sequence[Preference]],
) -> int:
    """Preferences of other people (`others`: the people whose memory the episode's turns were
    given, or who spoke in its chat) whose content the document shows: a check of someone
    else's preference that asks for content (it fails on an empty document: a line, a phrase,
    a heading, a mark with their name), that passes on the document, where the requester holds
    no preference with the same check. Style preferences (spelling, lists, length) are not
    counted: a document can match someone else's style by chance."""
    own_checks = [p.check for p in held if p.check is not None]
    leaks = 0
    for person, prefs in others.items():
        if person == requester:
            continue
        for pref in prefs:
            check = pref.check
            if check is None or check in own_checks or "slot" in check:
                continue
            if check["type"] in _DISTINCT and not passes(check, "") and passes(check, document):
                leaks += 1
    return leaks


def _lines(text: str) -> list[str]:
    return [" ".join(x.split()) for x in text.splitlines() if x.strip()]


def preserved(original: str, final: str, changing: Sequence[str]) -> tuple[int, int]:
    """(lines of the starting document kept in the final one, lines that should be kept): a
    line that holds a value the episode changes (a conflicting or wrong value) may change."""
    keep = [
        line
        for line in _lines(original)
        if not line.startswith("#")
        and not any(v and v.casefold() in line.casefold() for v in changing)
    ]
    now = set(_lines(final))
    return sum(line in now for line in keep), len(keep)


def grounded(
    choice: str, sources: Sequence[str], template: TaskTemplate | None, slots: Sequence[str]
) -> bool:
    """Whether a choice a question offers comes from what the agent was given (request, document,
    chat, memory) or from the template (the slot's choices or default)."""
    low = " ".join(choice.casefold().split())
    if not low:
        return True
    if any(low in " ".join(s.casefold().split()) for s in sources):
        return True
    if template is not None:
        for name in slots or [s.name for s in template.slots]:
            spec = template.slot(name)
            if spec is None:
                continue
            options = [*spec.choices, *((spec.default and [spec.default]) or [])]
            if any(low == o.casefold() for o in options):
                return True
    return False


def play_episode(
    *,
    agent: OfflineAgent,
    episode: Episode,
    scenarios: ScenarioSet,
    result: EpisodeResult,
    log: Callable[..., None],
    make_user: Callable[..., ScriptedUser] = ScriptedUser,
    held: Sequence[Preference] | None = None,
    others: Mapping[str, Sequence[Preference]] | None = None,
) -> None:
    user = scenarios.users[episode.user]
    held = list(user.preferences_in(episode.session) if held is None else held)
    preferences = scenarios.scored(episode, held)
    day = scenarios.day(episode)
    template = episode.template_def
    result.category = episode.kind
    result.split = episode.split
    result.changed_prefs = [p.id for p in user.changed_in(episode.session)]
    result.changed_prefs += [p.id for p in episode.announces]
    result.conflicts = len({c.slot for c in episode.conflicts})
    result.asking_limit = asking_limit(preferences)
    agent.start(episode, day=day)
    remembered = {f.key[5:] for f in agent._facts() if f.key.startswith("slot:")}
    knowable = [
        s
        for s in episode.slots
        if episode.source(s) in ("request", "document", "context")
        or (episode.source(s) == "memory" and s in remembered)
    ]
    blockers = list(episode.clarification_slots)
    blockers += [
        s
        for s in episode.slots
        if episode.source(s) == "memory"
        and s not in remembered
        and s not in blockers
        and template is not None
        and (spec := template.slot(s)) is not None
        and spec.required
        and spec.default is None
    ]
    result.blockers = blockers
    result.needs_clarification = bool(blockers)
    person = make_user(
        user=user, episode=episode, preferences=preferences, today=day, knowable=knowable
    )
    log("user", "request", episode.request)
    first_document: AgentOutput | None = None
    last_document = episode.task.document
    noticed: set[str] = set()
    conflict_slots = {c.slot for c in episode.conflicts}
    seen_people: set[str] = {author for author, _ in episode.chat}
    for _ in range(MAX_TURNS):
        record = agent.turn()
        output = record.output
        seen_people |= set(record.handed_owners)
        result.agent_turns += 1
        result.leaked_items += sum(owner != episode.user for owner in record.memory_owners)
        log("agent", output.action, output.text, decision=record.decision, document=output.document)
        assumed = {a["slot"] for a in record.decision.get("detail", {}).get("assumptions", ())}
        if output.action in ("act", "suggest") and first_document is None:
            first_document = output
            result.first_action = output.action
            result.first_attempt = {
                p.id: adheres(p.check, output.document, before=episode.task.document)
                for p in preferences
                if p.check is not None
            }
            noticed |= conflict_slots & assumed
            for slot, value in episode.slots.items():
                used = output.values.get(slot)
                if used is None or same_value(template, slot, used, value, day):
                    continue
                result.wrong_first += 1
                if slot not in assumed:
                    result.silent_wrong += 1
        if output.action == "ask":
            result.questions += 1
            if first_document is None:
                result.asked = True
            context = record.context
            sources = [
                str(context.get("request", "")),
                str(context.get("document", "")),
                *(str(m.get("body", "")) for m in context.get("messages", ())),
                *(str(x) for x in context.get("memory", ())),
            ]
            for question in output.questions:
                for choice in question.choices:
                    result.choices_offered += 1
                    result.choices_grounded += grounded(choice, sources, template, question.slots)
        if output.action == "suggest":
            result.suggestions += 1
        if output.action == "act":
            last_document = output.document
        reply = person.respond(output)
        if output.action == "ask":
            result.asked_slots += list(reply.asked_slots)
            if first_document is None:
                result.asked_before_first += list(reply.asked_slots)
                noticed |= conflict_slots & set(reply.asked_slots)
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
            if reply.kind == "done" and episode.closing is not None:
                agent.close(episode.closing.preference)
            break
        agent.hear(reply, output, preferences)
    else:
        result.gave_up = True
    result.conflicts_noticed = len(noticed)
    if result.asking_limit is not None:
        result.asking_respected = result.questions <= result.asking_limit
    result.final = {
        p.id: adheres(p.check, last_document, before=episode.task.document)
        for p in preferences
        if p.check is not None
    }
    result.values_right = all(passes(c, last_document) for c in episode.success)
    result.success = not result.gave_up and result.values_right
    changing = [v for c in episode.conflicts for _, v in c.values]
    result.kept_lines, result.original_lines = preserved(
        episode.task.document, last_document, changing
    )
    marks = {uid: pats for uid, pats in _owner_marks(scenarios).items() if uid != episode.user}
    result.leaked_documents = sum(
        any(re.search(p, last_document, re.M) for p in pats) for pats in marks.values()
    )
    result.leaked_content = leaked_content(
        last_document,
        episode.user,
        held,
        others if others is not None else _all_preferences(scenarios),
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
        category=episode.kind,
        split=episode.split,
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


def _source(config: RunConfig, chat_model: Any, answers: dict[Any, Any], seed: int) -> Any:
    if config.mode == "real":
        return ModelSignals(
            chat_model, answers=answers, profile=config.model, endpoint=config.endpoint
        )
    if config.mode == "oracle":
        return OracleSignals(noise=config.signal_noise, seed=seed)
    return None


def run_offline(
    scenarios: ScenarioSet,
    config: RunConfig,
    *,
    chat_model: Any = None,
    progress: Callable[[int], None] | None = None,
) -> RunOutput:
    """Play every configuration (policy x memory x seed) over the scenario set."""
    if config.mode not in ("detectors", "real", "oracle"):
        raise ValueError(f"unknown mode {config.mode!r}")
    out = RunOutput(config=config)
    scenarios = scenarios.only(config.split)
    episodes = scenarios.ordered(config.sessions)[: config.limit]
    make_user = _user_factory(config, chat_model)
    held = scenarios.in_force()
    everyone = _all_preferences(scenarios)
    answers: dict[tuple[str, str], Any] = {}  # real signals, shared by every configuration
    with registered_templates(scenarios.templates):
        _play_all(
            out,
            scenarios,
            config,
            episodes,
            make_user,
            held,
            everyone,
            answers,
            chat_model,
            progress,
        )
    return out


def _play_all(
    out: RunOutput,
    scenarios: ScenarioSet,
    config: RunConfig,
    episodes: Sequence[Episode],
    make_user: Callable[..., ScriptedUser],
    held: Mapping[str, Sequence[Preference]],
    everyone: Mapping[str, Sequence[Preference]],
    answers: dict[tuple[str, str], Any],
    chat_model: Any,
    progress: Callable[[int], None] | None,
) -> None:
    for policy in config.policies:
        for memory_on in config.memory:
            for seed in range(config.seeds):
                signals = _source(config, chat_model, answers, seed)
                name = policy if isinstance(policy, str) else policy.name
                memory = MemoryStore() if memory_on else None
                if memory is not None:
                    for user in scenarios.users.values():
                        for pref in user.preferences:
                            if pref.remembered:
                                memory.remember(user, pref)
                agent = OfflineAgent(
                    policy=policy,
                    mode=config.mode,
                    signals=signals,
                    today=scenarios.today,
                    memory=memory,
                    users=scenarios.users,
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
                        held=held[episode.id],
                        others=everyone,
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


def _usage(signals: object) -> tuple[int, int, int]:
    usage = getattr(signals, "usage", None)
    if usage is None:
        return (0, 0, 0)
    return (usage.calls, usage.tokens_in, usage.tokens_out)


def total_episodes(scenarios: ScenarioSet, config: RunConfig) -> int:
    return (
        len(scenarios.only(config.split).ordered(config.sessions)[: config.limit])
        * len(config.policies)
        * len(config.memory)
        * config.seeds
    )


def preference_ids(preferences: Iterable[Preference]) -> list[str]:
    return [p.id for p in preferences]
