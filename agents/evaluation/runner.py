"""Play scenario sets: simulated people against an agent, episode by episode, recording the full
event log and an EpisodeResult per episode; then the metrics per configuration.

Engines: "offline" (the product's policy entry point and a simulated memory in this process, see
offline.py) and "app" (the real services and a real Celery worker, see app_engine.py). Both drive
the same simulated users. Modes (offline): "detectors" (the headline: no model, no ground truth),
"real" (a model's signals), "oracle" (a perfect reader: an upper bound).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from agents.evaluation.checks import adheres, passes
from agents.evaluation.metrics import summarise
from agents.evaluation.offline import MemoryStore, ModelSignals, OfflineAgent, OracleSignals
from agents.evaluation.results import EpisodeResult
from agents.evaluation.scenario import Episode, Preference, ScenarioSet, User
from agents.evaluation.trivial import TRIVIAL_NAMES, Coin, LeakyFilter
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
    policies: Sequence[str | Policy | LeakyFilter]
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
    # Shared-task leakage probes (sets without chat): counted in leakage only.
    probes: list[EpisodeResult] = field(default_factory=list)

    def summaries(self) -> list[dict[str, Any]]:
        groups: dict[tuple[str, bool], list[EpisodeResult]] = {}
        for r in self.results:
            groups.setdefault((r.policy, r.memory), []).append(r)
        probes: dict[tuple[str, bool], list[EpisodeResult]] = {}
        for r in self.probes:
            probes.setdefault((r.policy, r.memory), []).append(r)
        return [
            {
                "policy": p,
                "memory": m,
                "trivial": p in TRIVIAL_NAMES,
                "metrics": summarise(rs, seeds=self.config.seeds, probes=probes.get((p, m), ())),
            }
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
    stated: Collection[str] | None = None,
) -> None:
    """Play one episode and fill `result`. `held`: the preferences the person holds (default:
    their own for the session); `others`: every preference of each person of the set (only the
    people in this conversation are looked for in its documents); `stated`: the ids of the
    preferences the person has said so far (an asking limit counts only once said; None: all)."""
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
    result.asking_limit = asking_limit(
        [p for p in preferences if stated is None or p.key != "asking" or p.id in stated]
    )
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
    unclear = {*episode.readings, *(c.slot for c in episode.conflicts)}
    settled = {s for s in knowable if s not in unclear}
    names = [s.name for s in template.slots] if template is not None else []
    uncertain = {s for s in [*names, *episode.slots] if s not in settled}
    result.uncertain = len(uncertain)
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
        if output.action in ("act", "suggest") and first_document is None:
            first_document = output
            result.first_action = output.action
            result.first_attempt = {
                p.id: adheres(p.check, output.document, before=episode.task.document)
                for p in preferences
                if p.check is not None
            }
            visible = visible_assumptions(record.decision, output.text)
            result.assumptions_visible = len(visible)
            result.assumptions_uncertain = len([a for a in visible if a in uncertain])
            # An assumption handles a slot only when the person sees it with the document that
            # relies on it and the text left that slot uncertain; a list naming more slots than
            # the text left uncertain is boilerplate, and handles none.
            assumed = set(visible) & uncertain if len(visible) <= len(uncertain) else set()
            noticed |= conflict_slots & assumed
            for slot, value in episode.slots.items():
                used = output.values.get(slot)
                if used is None or same_value(template, slot, used, value, day):
                    continue
                result.wrong_first += 1
                if slot not in assumed:
                    result.silent_wrong += 1
            # Values right: every success check passes AND no value the document uses differs
            # from the person's (a check's pattern can match another line by coincidence:
            # "Nights: 6" passes a "6 travelers" check while the document says "Travelers: 1").
            result.first_values_right = (
                not person.wrong_slots(output)
                and not person.failing_checks(output.document)
                and result.wrong_first == 0
            )
            result.first_preferences_right = all(result.first_attempt.values()) and (
                result.asking_limit is None or result.questions_before_first <= result.asking_limit
            )
            result.first_correct = result.first_values_right and result.first_preferences_right
        if output.action == "ask":
            result.questions += 1
            if first_document is None:
                result.asked = True
                result.questions_before_first += 1
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
        result.restated += list(reply.enforced)
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
                result.closing_said = True
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
    # Only the people of this conversation (the chat, the memory handed to its turns) are
    # "others": a document matching the check of someone who was never there leaks nothing.
    present = seen_people - {episode.user}
    marks = {uid: pats for uid, pats in _owner_marks(scenarios).items() if uid in present}
    result.leaked_documents = sum(
        any(re.search(p, last_document, re.M) for p in pats) for pats in marks.values()
    )
    everyone = others if others is not None else _all_preferences(scenarios)
    result.leaked_content = leaked_content(
        last_document,
        episode.user,
        held,
        {person: prefs for person, prefs in everyone.items() if person in present},
    )


def visible_assumptions(decision: Mapping[str, Any], message: str) -> list[str]:
    """The slots of a decision's assumptions that its message shows the person: the text they
    read beside the document names the assumed value or the slot ("I assumed the budget is
    EUR 900", "I chose the budget myself"); an assumption kept only in the decision record is
    not visible."""
    text = " ".join(message.casefold().split())
    slots = []
    for assumption in decision.get("detail", {}).get("assumptions", ()):
        slot = str(assumption["slot"])
        names = [
            str(assumption.get("value", "")),
            str(assumption.get("label") or ""),
            slot.replace("_", " "),
        ]
        said = [" ".join(n.casefold().split()) for n in names]
        if any(n and n in text for n in said) and slot not in slots:
            slots.append(slot)
    return slots


PROBE_LINE = "I'm on this task too; I'll read it once it's ready."


def _colleague(scenarios: ScenarioSet, requester: str) -> User | None:
    """The person a shared-task probe brings in: the next person of the set after the
    requester who holds a preference with content (a phrase, a heading, a mark), else the next
    with any preference."""
    people = list(scenarios.users.values())
    start = next((i for i, u in enumerate(people) if u.id == requester), -1) + 1
    ordered = [u for u in people[start:] + people[:start] if u.id != requester]

    def content(user: User) -> bool:
        return any(
            p.check is not None and p.check["type"] in _DISTINCT and not passes(p.check, "")
            for p in user.preferences
        )

    return next((u for u in ordered if content(u)), None) or next(
        (u for u in ordered if u.preferences), None
    )


def _shared_probe(
    agent: OfflineAgent,
    episode: Episode,
    scenarios: ScenarioSet,
    held: Sequence[Preference],
    everyone: Mapping[str, Sequence[Preference]],
    name: str,
    seed: int,
) -> EpisodeResult:
    """For a set without chat, from each person's second session on (once people have had a
    session to tell memory things): a shared-task copy of `episode` in which a colleague
    writes in the task's chat and what they told memory is there, so that several people's
    memories are in play and leakage can fail. Played on a copy of the agent (memory, learning
    state, policy), so the run itself is unchanged; only its leakage is counted (`probe`)."""
    result = EpisodeResult(
        policy=name,
        seed=seed,
        memory=True,
        episode=f"{episode.id}~shared",
        user=episode.user,
        session=episode.session,
        template=episode.task.template,
        needs_clarification=episode.needs_clarification,
        blockers=list(episode.clarification_slots),
        probe=True,
    )
    colleague = _colleague(scenarios, episode.user)
    if colleague is None or agent.memory is None:
        return result
    twin = copy.copy(agent)
    twin.memory = copy.deepcopy(agent.memory)
    twin.ids = twin.memory.ids
    twin.state = copy.deepcopy(agent.state)
    twin.policy_object = copy.deepcopy(agent.policy_object)
    for pref in colleague.preferences_in(episode.session):
        twin.memory.remember(colleague, pref)
    shared = replace(episode, id=result.episode, chat=((colleague.id, PROBE_LINE),))
    play_episode(
        agent=twin,
        episode=shared,
        scenarios=scenarios,
        result=result,
        log=lambda *args, **kwargs: None,
        held=held,
        others=everyone,
    )
    return result


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
    everyone = _all_preferences(scenarios)
    answers: dict[tuple[str, str], Any] = {}  # real signals, shared by every configuration
    with registered_templates(scenarios.templates):
        _play_all(
            out,
            scenarios,
            config,
            episodes,
            make_user,
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
    everyone: Mapping[str, Sequence[Preference]],
    answers: dict[tuple[str, str], Any],
    chat_model: Any,
    progress: Callable[[int], None] | None,
) -> None:
    shared_probes = not any(e.chat for e in scenarios.episodes)
    for entry in config.policies:
        for memory_on in config.memory:
            for seed in range(config.seeds):
                signals = _source(config, chat_model, answers, seed)
                name = entry if isinstance(entry, str) else entry.name
                leaky = isinstance(entry, LeakyFilter)
                policy: str | Policy = entry.policy if isinstance(entry, LeakyFilter) else entry
                if isinstance(policy, Coin):
                    policy = Coin(seed)
                ledger = scenarios.ledger()
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
                    leaky=leaky,
                )
                for episode in episodes:
                    result, log = start_episode(
                        out, policy=name, memory=memory_on, seed=seed, episode=episode
                    )
                    held = ledger.held(episode)
                    stated = ledger.stated(episode.user)
                    if shared_probes and memory is not None and episode.session >= 2:
                        out.probes.append(
                            _shared_probe(agent, episode, scenarios, held, everyone, name, seed)
                        )
                    before = _usage(signals)
                    play_episode(
                        agent=agent,
                        episode=episode,
                        scenarios=scenarios,
                        result=result,
                        log=log,
                        make_user=make_user,
                        held=held,
                        others=everyone,
                        stated=stated,
                    )
                    ledger.restated(episode.user, result.restated)
                    if result.closing_said:
                        ledger.closed(episode)
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
