"""The offline agent: the product's own policy entry point, driven turn by turn without the app.

Every turn builds the turn context the product builds (turn_context.py: request, document, recent
chat, answered cards, memory items, template, the request's date) and asks
`agents.policies.adapter.decide_from_context` for the decision. What the signals are depends on
the mode (docs/evaluation.md "Modes"):

- detectors: none. The product's text detectors alone (the headline).
- real: the configured model's signals, only the calls the policy makes in the app
  (`agents.engine.signals.NEEDS`); a model that cannot be reached stops the run
  (`ModelUnavailable`).
- oracle: a perfect reader of the text (`OracleSignals`): an upper bound, never the labels.

Documents come from the writer (writer.py), which never sees a check.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from pydantic import BaseModel

from agents.engine.signals import needed
from agents.evaluation.scenario import Episode, Preference, User
from agents.evaluation.turn_context import Conversation, product_decision, turn_context
from agents.evaluation.users import AgentOutput, AskedQuestion, FeedbackKind, Reply
from agents.evaluation.writer import Known, SlotLine, write_document
from agents.policies import Decision, Signals, get_policy
from agents.policies.adapter import answers_by_slot, decision_record, situation_from_context
from agents.policies.bandit import REWARDS
from agents.policies.base import Interpretation, SlotSpec
from agents.policies.detect import normalise
from agents.policies.memory_facts import MemoryFact, facts_for_requester
from agents.policies.registry import LearningPolicy, Policy
from agents.policies.signals import (
    AmbiguityRating,
    ExtractedSlot,
    Interpretations,
    SlotExtraction,
    ambiguity_prompt,
    ask_structured,
    build_signals,
    extraction_prompt,
    interpretations_prompt,
)
from agents.policies.templates import TaskTemplate

SAMPLES = 4
MODES = ("detectors", "real", "oracle")


@dataclass
class Usage:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    reused: int = 0  # calls answered from the run's shared answers (ModelSignals)


class ModelUnavailable(RuntimeError):
    """The model behind a profile could not be reached or failed: the run stops."""


# --- oracle: a perfect reader, plus documented noise --------------------------------------------

_PLAUSIBLE: dict[str, tuple[str, ...]] = {
    "date": ("2027-04-10", "2027-05-15", "2027-06-20", "2027-07-25"),
    "money": ("EUR 500", "EUR 1000", "EUR 2000", "EUR 4000"),
    "number": ("2", "4", "8", "16"),
    "place": ("Rome", "Paris", "Berlin", "Prague"),
    "person": ("Alex", "Sam", "Kim", "Jo"),
}


def _plausible(spec: SlotSpec | None, slot: str, index: int) -> str:
    """A different plausible value per sampled reading (for a slot the text does not give)."""
    if spec is not None and spec.choices:
        return spec.choices[index % len(spec.choices)]
    pool = _PLAUSIBLE.get(spec.type if spec else "", ())
    if pool:
        return pool[index % len(pool)]
    return f"{slot.replace('_', ' ')} reading {index + 1}"


class OracleSignals:
    """Perfect perception of the text, never the labels: the extraction reads every value the
    request, the document or the context states with its meant value (an ambiguous phrase gets
    a low confidence); the sampled readings agree on what the text gives, split an ambiguous
    phrase into its readings, and disagree on every template slot the text does not give; the
    judge's rating follows from those readings by a fixed rule (0.85 when they disagree on a
    required slot, else 0.15). Blockers, categories, conflicts and checks are never read, so a
    policy can still ask about a slot that has a harmless default, or miss a contradiction.

    `noise` (0..1) models an imperfect judge (docs/evaluation.md "Signal noise"): each extracted
    value is dropped with probability `noise`; the rating is flipped with probability `noise`
    and otherwise moved by up to ±noise/2 (calibration error); each reading's value of each slot
    is replaced by a plausible other value with probability `noise`/2."""

    mode = "oracle"

    def __init__(self, *, noise: float = 0.0, seed: int = 0) -> None:
        self.noise = noise
        self.seed = seed
        self.usage = Usage()

    def signals(
        self,
        *,
        episode: Episode,
        template: TaskTemplate | None,
        known: Mapping[str, str],
        turn: int = 0,
    ) -> tuple[SlotExtraction | None, Signals]:
        rng = random.Random(f"{self.seed}:{episode.id}:{turn}")
        read = {
            slot: value
            for slot, value in episode.slots.items()
            if episode.source(slot) in ("request", "document", "context")
        }
        extracted = []
        for slot, value in list(read.items())[:12]:
            if self.noise and rng.random() < self.noise:
                continue
            evidence = episode.stated.get(slot, "")
            confidence = 0.5 if slot in episode.readings else 0.95
            extracted.append(
                ExtractedSlot(
                    slot=slot, value=value[:120], confidence=confidence, evidence=evidence[:120]
                )
            )
        specs = list(template.slots) if template else []
        samples: list[Interpretation] = []
        for index in range(SAMPLES):
            values = {s: v for s, v in read.items() if s not in episode.readings}
            values.update(known)
            for slot, readings in episode.readings.items():
                if slot not in known:
                    values[slot] = readings[index % len(readings)]
            for spec in specs:
                if spec.name not in values:
                    values[spec.name] = _plausible(spec, spec.name, index)
            if self.noise:
                for slot in list(values):
                    if rng.random() < self.noise / 2:
                        other = template.slot(slot) if template else None
                        values[slot] = _plausible(other, slot, index + 1)
            samples.append(Interpretation(summary=f"reading {index + 1}", values=values))
        required = {s.name for s in specs if s.required} or set(read)
        unclear = tuple(
            s for s in sorted(required) if len({i.values.get(s, "") for i in samples}) > 1
        )
        rating = 0.85 if unclear else 0.15
        if self.noise:
            if rng.random() < self.noise:
                rating = 1.0 - rating
            rating = min(1.0, max(0.0, rating + rng.uniform(-self.noise / 2, self.noise / 2)))
        first = template.slot(unclear[0]) if template and unclear else None
        return SlotExtraction(slots=extracted), Signals(
            ambiguity=rating,
            ambiguity_reason="readings differ on: " + ", ".join(unclear) if unclear else "clear",
            unclear_slots=unclear,
            suggested_question=(first.question if first else "") or "",
            interpretations=tuple(samples),
        )


# --- real: the model's signals, only those the policy reads --------------------------------------


def _needs(policy: str) -> frozenset[str]:
    """What the policy reads of the model in the app (agents.engine.signals.NEEDS)."""
    return needed(policy)


def _transport_failure(error: str) -> bool:
    """An error that means the model was not reached or broke (not a bad answer)."""
    return bool(error) and not error.startswith(("ValidationError", "JSONDecodeError", "Invalid"))


class ModelSignals:
    """Signals from a chat model through `ask_structured` (the call the turn engine makes),
    only the calls `policy` makes in the app. A call that fails to reach the model (closed
    port, server error, timeout) raises `ModelUnavailable` naming the profile and endpoint."""

    mode = "real"

    def __init__(
        self,
        chat_model: Any,
        *,
        answers: dict[tuple[str, str], Any] | None = None,
        profile: str = "",
        endpoint: str = "",
    ) -> None:
        self.chat_model = chat_model
        self.usage = Usage()
        self.profile = profile
        self.endpoint = endpoint
        # Answers by (schema, prompt), shared by every configuration of a run (the same
        # situation gives the same prompt); usage counts every call a configuration makes.
        self.answers = {} if answers is None else answers

    def _call(self, prompt: str, schema: type[BaseModel]) -> Any:
        self.usage.calls += 1
        key = (schema.__name__, prompt)
        answer = self.answers.get(key)
        if answer is None:
            model = self.chat_model
            constrained = hasattr(model, "decision_json_schema")  # grammar-constrained model
            if constrained:
                model = model.model_copy(
                    update={"decision_json_schema": schema.model_json_schema()}
                )
            answer = ask_structured(model, prompt, schema, schema_in_prompt=not constrained)
            if answer.error and not answer.text and _transport_failure(answer.error):
                raise ModelUnavailable(
                    f"model profile {self.profile or '(unnamed)'!r} at "
                    f"{self.endpoint or '(no endpoint)'} failed: {answer.error[:300]}"
                )
            self.answers[key] = answer
        else:
            self.usage.reused += 1
        self.usage.tokens_in += answer.tokens_in
        self.usage.tokens_out += answer.tokens_out
        return answer.value

    def for_policy(
        self, policy: str, *, request: str, template: TaskTemplate | None, known: Mapping[str, str]
    ) -> tuple[SlotExtraction | None, Signals | None]:
        needs = _needs(policy)
        specs = list(template.slots) if template else []
        extraction = rating = None
        samples: list[Any] = []
        if "extraction" in needs:
            extraction = self._call(extraction_prompt(request, specs), SlotExtraction)
        if "ambiguity" in needs:
            rating = self._call(ambiguity_prompt(request, specs, dict(known)), AmbiguityRating)
        if "samples" in needs:
            readings = self._call(
                interpretations_prompt(request, specs, dict(known), count=SAMPLES),
                Interpretations,
            )
            samples = list(readings.interpretations) if readings is not None else []
        if rating is None and not samples:
            return extraction, None
        return extraction, build_signals(rating=rating, samples=samples)


# --- memory: what the memory app would hold ------------------------------------------------------


@dataclass
class MemoryStore:
    """The preference memory of an offline run: per person, one item per key (a newer one
    supersedes), with its owner, as the memory app extracts what people say (key, value, text,
    kinds). Shared by every person of a configuration, so another person's items are there to
    leak."""

    items: dict[str, dict[str, MemoryFact]] = field(default_factory=dict)
    ids: dict[str, int] = field(default_factory=dict)
    next_id: int = 1

    def person_id(self, user: str) -> int:
        if user not in self.ids:
            self.ids[user] = len(self.ids) + 1
        return self.ids[user]

    def remember(self, user: User, preference: Preference) -> None:
        fact = MemoryFact(
            item_id=self.next_id,
            person_id=self.person_id(user.id),
            person_name=user.name,
            key=preference.key,
            value=preference.value,
            scope="workspace",
            kinds=preference.kinds,
            text=preference.text,
        )
        self.next_id += 1
        self.items.setdefault(user.id, {})[preference.key] = fact

    def facts(self, people: Sequence[str]) -> list[MemoryFact]:
        return [f for p in dict.fromkeys(people) for f in self.items.get(p, {}).values()]


@dataclass
class TurnRecord:
    decision: dict[str, Any]
    output: AgentOutput
    memory_owners: tuple[str, ...] = ()  # owners of the items the product let the turn use
    context: dict[str, Any] = field(default_factory=dict, repr=False)
    handed_owners: tuple[str, ...] = ()  # owners of every item in the turn's context


def _known(preference: Preference) -> Known:
    return Known(key=preference.key, value=preference.value, text=preference.text)


class OfflineAgent:
    """One agent working through episodes, each turn decided by the product's entry point.
    Keeps memory (when on) and a learning policy's state across episodes."""

    def __init__(
        self,
        *,
        policy: str | Policy,
        mode: str = "detectors",
        signals: OracleSignals | ModelSignals | None = None,
        today: date,
        memory: MemoryStore | None = None,
        users: Mapping[str, User] | None = None,
        seed: int = 0,
        leaky: bool = False,
    ) -> None:
        self.policy_name = policy if isinstance(policy, str) else policy.name
        self.policy_object = None if isinstance(policy, str) else policy
        self.state: dict[str, Any] | None = None
        if isinstance(policy, str) and policy == "bandit":
            self.state = dict(get_policy("bandit", seed=seed).to_state())  # type: ignore[attr-defined]
        self.mode = mode
        self.source = signals
        self.today = today
        self.memory = memory
        self.users = dict(users or {})
        self.ids = memory.ids if memory is not None else {}
        # The counter-example of the memory filter (trivial.LeakyFilter): every person's items
        # reach the turn's work, not only the requester's own and shared task facts.
        self.leaky = leaky
        self._reset(None, today)

    def _pid(self, user: str) -> int:
        if self.memory is not None:
            return self.memory.person_id(user)
        return self.ids.setdefault(user, len(self.ids) + 1)

    def _reset(self, episode: Episode | None, day: date) -> None:
        self.episode = episode
        self.day = day
        self.template = episode.template_def if episode else None
        self.conversation = Conversation()
        self.document = episode.task.document if episode else ""
        self.said: list[Preference] = []  # preferences the person stated in this episode
        self.last: Decision | None = None
        self.turns = 0
        self.context: dict[str, Any] = {}

    def start(self, episode: Episode, *, day: date | None = None) -> None:
        self._reset(episode, day or episode.date or self.today)
        for author, text in episode.chat:
            user = self.users.get(author)
            self.conversation.say(user.name if user else author, text)
        requester = self.users.get(episode.user)
        self.conversation.say(requester.name if requester else episode.user, episode.request)
        for preference in episode.announces:
            self.said.append(preference)
            if self.memory is not None and requester is not None:
                self.memory.remember(requester, preference)

    # --- one turn ---------------------------------------------------------------------------

    def _facts(self) -> list[MemoryFact]:
        assert self.episode is not None
        if self.memory is None:
            return []
        people = [self.episode.user, *(author for author, _ in self.episode.chat)]
        return self.memory.facts(people)

    def _context(self, facts: Sequence[MemoryFact]) -> dict[str, Any]:
        assert self.episode is not None
        requester = self.users.get(self.episode.user)
        return turn_context(
            agent="Eve",
            title=self.episode.task.title,
            goal=self.episode.task.goal,
            template=self.template,
            document=self.document,
            conversation=self.conversation,
            request=self.episode.request,
            requester=requester.name if requester else self.episode.user,
            requester_id=self._pid(self.episode.user),
            facts=facts,
            day=self.day,
        )

    def _signals(self, context: Mapping[str, Any]) -> tuple[Any, Any]:
        assert self.episode is not None
        if self.source is None:
            return None, None
        known = answers_by_slot(context, self.template, today=self.day)
        if isinstance(self.source, ModelSignals):
            return self.source.for_policy(
                self.policy_name, request=self.episode.request, template=self.template, known=known
            )
        return self.source.signals(
            episode=self.episode, template=self.template, known=known, turn=self.turns
        )

    def _decide(self, context: Mapping[str, Any]) -> dict[str, Any]:
        extraction, signals = self._signals(context)
        if self.policy_object is not None:  # a policy object (tests, plug-ins): same situation
            options: dict[str, Any] = {"today": self.day, "signals": signals}
            if self.template is not None:
                options["template_kind"] = self.template.kind
            situation = situation_from_context(context, extraction=extraction, **options)
            return decision_record(situation, self.policy_object.decide(situation))
        record = product_decision(
            self.policy_name,
            context,
            template=self.template,
            day=self.day,
            policy_state=self.state,
            signals=signals,
            extraction=extraction,
        )
        if "policy_state" in record:
            self.state = dict(record["policy_state"])
        return record

    def _values(self, record: Mapping[str, Any]) -> dict[str, str]:
        situation = record.get("situation", {})
        values: dict[str, str] = {}
        for state in situation.get("slots", ()):
            if state.get("value") and state.get("source") in (
                "request",
                "chat",
                "document",
                "memory",
            ):
                values[state["spec"]["name"]] = str(state["value"])
        for assumption in record.get("detail", {}).get("assumptions", ()):
            values.setdefault(str(assumption["slot"]), str(assumption["value"]))
        for state in situation.get("slots", ()):
            name = state["spec"]["name"]
            if name not in values and state["spec"].get("required"):
                choices = state["spec"].get("choices") or []
                values[name] = choices[0] if choices else "to be decided"
        return values

    def _lines(self, values: Mapping[str, str]) -> list[SlotLine]:
        lines = []
        specs = list(self.template.slots) if self.template else []
        for spec in specs:
            if spec.name in values:
                lines.append(
                    SlotLine(
                        spec.display.capitalize(),
                        values[spec.name],
                        aliases=(spec.name.replace("_", " "), *spec.aliases),
                        is_date=spec.type == "date",
                    )
                )
        for name, value in values.items():
            if not any(s.name == name for s in specs):
                lines.append(SlotLine(name.replace("_", " ").capitalize(), value))
        return lines

    def allowed(self, facts: Sequence[MemoryFact]) -> list[MemoryFact]:
        """The memory items the product lets this turn use for the requester."""
        assert self.episode is not None
        if self.leaky:
            return [f for f in facts if f.applies_to(self.episode.task.template)]
        return facts_for_requester(
            facts, self._pid(self.episode.user), kind=self.episode.task.template
        )

    def known_preferences(self, facts: Sequence[MemoryFact]) -> list[Known]:
        """What the writer follows: the memory items the product lets this turn use, then what
        the person said in this episode (both by key, value and text)."""
        known = [Known(key=f.key, value=f.value, text=f.text) for f in self.allowed(facts)]
        return known + [_known(p) for p in self.said]

    def turn(self) -> TurnRecord:
        """One agent turn on the current episode state."""
        assert self.episode is not None
        facts = self._facts()
        context = self._context(facts)
        self.context = context
        record = self._decide(context)
        self.turns += 1
        self.last = Decision.from_dict(record["detail"])
        if record["decision"] == "ask":
            output = AgentOutput(
                action="ask",
                text=str(record["question"]),
                questions=tuple(
                    AskedQuestion(q["text"], tuple(q.get("slots", ())), tuple(q.get("choices", ())))
                    for q in record["detail"]["questions"]
                ),
            )
            self.conversation.say("Eve", output.text, kind="agent")
            return TurnRecord(record, output, (), context, self._owners(facts))
        values = self._values(record)
        requester = self.users.get(self.episode.user)
        document = write_document(
            title=self.episode.task.title,
            template=self.episode.task.template,
            lines=self._lines(values),
            known=self.known_preferences(facts),
            # The starting document is kept; the agent's own draft of this episode is redone.
            document=self.episode.task.document,
            person=requester.name if requester else "",
        )
        if record["decision"] == "act":
            self.document = document
        text = str(record.get("assumption") or "")
        self.conversation.say("Eve", text or "I updated the document.", kind="agent")
        owners = tuple(
            next((u for u, i in self.ids.items() if i == f.person_id), "")
            for f in self.allowed(facts)
            if not (f.shared and f.key.startswith("slot:"))
        )
        output = AgentOutput(action=record["decision"], text=text, document=document, values=values)
        return TurnRecord(record, output, owners, context, self._owners(facts))

    def _owners(self, facts: Sequence[MemoryFact]) -> tuple[str, ...]:
        by_id: dict[int | None, str] = {i: u for u, i in self.ids.items()}
        return tuple(dict.fromkeys(by_id.get(f.person_id, "") for f in facts))

    def hear(self, reply: Reply, output: AgentOutput, preferences: Sequence[Preference]) -> None:
        """The person's reply: answers go on the question card, everything else into the chat;
        restated preferences are remembered (memory on) and followed for the rest of the
        episode either way (the chat shows them)."""
        assert self.episode is not None
        requester = self.users.get(self.episode.user)
        name = requester.name if requester else self.episode.user
        if output.action == "ask" and reply.kind == "answer":
            self.conversation.answers.append({"question": output.text, "answer": reply.text})
        elif reply.text:
            self.conversation.say(name, reply.text)
        if reply.accepted:
            self.document = output.document
        by_id = {p.id: p for p in preferences}
        for pref_id in reply.enforced:
            pref = by_id.get(pref_id)
            if pref is None:
                continue
            self.said.append(pref)
            if self.memory is not None and requester is not None:
                self.memory.remember(requester, pref)

    def close(self, preference: Preference | None) -> None:
        """The person's closing remark stated a preference: the memory app keeps it."""
        assert self.episode is not None
        requester = self.users.get(self.episode.user)
        if preference is not None and self.memory is not None and requester is not None:
            self.memory.remember(requester, preference)

    def feedback(self, kind: FeedbackKind) -> float | None:
        """The person's feedback on the last move: a learning policy learns REWARDS[kind] on its
        persisted state, as the app's record_feedback does."""
        if self.last is None:
            return None
        reward = REWARDS[kind]
        if self.policy_object is not None:
            if isinstance(self.policy_object, LearningPolicy):
                self.policy_object.learn(self.last, reward)
                return reward
            return None
        if self.state is None:
            return None
        policy = get_policy(self.policy_name, state=self.state)
        if not isinstance(policy, LearningPolicy):
            return None
        policy.learn(self.last, reward)
        self.state = dict(policy.to_state())
        return reward


def normalised(template: TaskTemplate | None, slot: str, value: str, today: date) -> str:
    spec = template.slot(slot) if template else None
    return (normalise(value, spec, today=today) if spec else None) or value
