"""The offline agent: the clarification policies and preference memory without the app.

Each turn builds a Situation with agents.policies (slot detection over the request, answers,
chat, document and memory), adds model signals, runs the policy, and either asks (the policy's
tagged questions), suggests or edits (the oracle writer, see writer.py). Signals come either from
the scenario's ground truth (`OracleSignals`: this measures the policies' decision logic alone)
or from a chat model (`ModelSignals`, the prompts and schemas of agents/policies/signals.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, Protocol

from pydantic import BaseModel

from agents.evaluation.scenario import Episode, Preference
from agents.evaluation.users import (
    AgentOutput,
    AskedQuestion,
    FeedbackKind,
    Reply,
)
from agents.evaluation.writer import SlotLine, write_document
from agents.policies import AskingBudget, Decision, Signals, Situation, get_policy
from agents.policies.asking import question_message
from agents.policies.bandit import REWARDS
from agents.policies.base import Interpretation, LearningPolicy, Policy, SlotSpec
from agents.policies.detect import normalise
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
from agents.policies.situation import build_situation
from agents.policies.templates import TaskTemplate, get_template

SAMPLES = 4


@dataclass
class Usage:
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    reused: int = 0  # calls answered from the run's shared answers (ModelSignals)


class SignalSource(Protocol):
    mode: str

    def signals(
        self, *, episode: Episode, template: TaskTemplate | None, known: Mapping[str, str]
    ) -> tuple[SlotExtraction | None, Signals]: ...


class OracleSignals:
    """Perfect model signals from the ground truth: the extraction finds exactly what the
    request states; the judge rates the request ambiguous exactly while a blocker is unknown;
    sampled interpretations agree on everything except the unknown blockers."""

    mode = "oracle"

    def signals(
        self, *, episode: Episode, template: TaskTemplate | None, known: Mapping[str, str]
    ) -> tuple[SlotExtraction | None, Signals]:
        extraction = SlotExtraction(
            slots=[
                ExtractedSlot(
                    slot=slot, value=episode.slots[slot][:120], confidence=0.95, evidence=words
                )
                for slot, words in list(episode.stated.items())[:12]
            ]
        )
        open_blockers = [s for s in episode.clarification_slots if s not in known]
        samples: list[Interpretation] = []
        for index in range(SAMPLES):
            values = {s: v for s, v in episode.stated.items()}
            values = {s: episode.slots[s] for s in values}
            values.update(known)
            for slot in open_blockers:
                spec = template.slot(slot) if template else None
                values[slot] = _plausible(spec, slot, index)
            samples.append(Interpretation(summary=f"reading {index + 1}", values=values))
        first = template.slot(open_blockers[0]) if template and open_blockers else None
        return extraction, Signals(
            ambiguity=0.85 if open_blockers else 0.15,
            ambiguity_reason="unknown: " + ", ".join(open_blockers) if open_blockers else "clear",
            unclear_slots=tuple(open_blockers),
            suggested_question=(first.question if first else "") or "",
            interpretations=tuple(samples),
        )


_PLAUSIBLE: dict[str, tuple[str, ...]] = {
    "date": ("2027-04-10", "2027-05-15", "2027-06-20", "2027-07-25"),
    "money": ("EUR 500", "EUR 1000", "EUR 2000", "EUR 4000"),
    "number": ("2", "4", "8", "16"),
    "place": ("Rome", "Paris", "Berlin", "Prague"),
    "person": ("Alex", "Sam", "Kim", "Jo"),
}


def _plausible(spec: SlotSpec | None, slot: str, index: int) -> str:
    """A different plausible value per sampled reading (the readings disagree on blockers)."""
    if spec is not None and spec.choices:
        return spec.choices[index % len(spec.choices)]
    pool = _PLAUSIBLE.get(spec.type if spec else "", ())
    if pool:
        return pool[index % len(pool)]
    return f"{slot.replace('_', ' ')} reading {index + 1}"


def oracle_slots(situation: Situation, episode: Episode, today: date) -> Situation:
    """Slot extraction from the ground truth: what the request states takes its true value
    (source "request"); what the detectors read into the request although it does not state it
    (e.g. "in June" for a start date) becomes a guess (source "model")."""
    template = get_template(episode.task.template) if episode.task.template else None
    slots = []
    for state in situation.slots:
        if state.name in episode.stated and state.source in (None, "request", "model", "default"):
            value = normalised(template, state.name, episode.slots[state.name], today)
            state = replace(state, value=value, source="request", confidence=0.95)
        elif state.source == "request" and state.name not in episode.stated:
            state = replace(state, source="model", confidence=min(state.confidence, 0.5))
        slots.append(state)
    return replace(situation, slots=tuple(slots))


class ModelSignals:
    """Signals from a chat model (any langchain-core chat model, e.g. from agents/llm.py):
    one extraction, one ambiguity rating, one call for several interpretations, each through
    `ask_structured` (the same call the turn engine makes); an unusable answer gives no signal."""

    mode = "real"

    def __init__(
        self, chat_model: Any, *, answers: dict[tuple[str, str], Any] | None = None
    ) -> None:
        self.chat_model = chat_model
        self.usage = Usage()
        # Answers by (schema, prompt), shared by every configuration of a run: a signal depends
        # only on the request, the template and what is known, never on the policy, so every
        # policy sees the same signals for the same situation and a slow local model is asked
        # once. Usage still counts every call, as a configuration on its own would spend it.
        self.answers = {} if answers is None else answers

    def _call(self, prompt: str, schema: type[BaseModel]) -> Any:
        self.usage.calls += 1
        key = (schema.__name__, prompt)
        answer = self.answers.get(key)
        if answer is None:
            model = self.chat_model
            constrained = hasattr(model, "decision_json_schema")  # grammar-constrained model
            if constrained:
                schema_json = schema.model_json_schema()
                model = model.model_copy(update={"decision_json_schema": schema_json})
            answer = ask_structured(model, prompt, schema, schema_in_prompt=not constrained)
            self.answers[key] = answer
        else:
            self.usage.reused += 1
        if answer.text or not answer.error:
            self.usage.tokens_in += answer.tokens_in
            self.usage.tokens_out += answer.tokens_out
        return answer.value

    def signals(
        self, *, episode: Episode, template: TaskTemplate | None, known: Mapping[str, str]
    ) -> tuple[SlotExtraction | None, Signals]:
        specs = list(template.slots) if template else []
        extraction = self._call(extraction_prompt(episode.request, specs), SlotExtraction)
        rating = self._call(ambiguity_prompt(episode.request, specs, dict(known)), AmbiguityRating)
        readings = self._call(
            interpretations_prompt(episode.request, specs, dict(known), count=SAMPLES),
            Interpretations,
        )
        samples = readings.interpretations if readings is not None else []
        return extraction, build_signals(rating=rating, samples=samples)


@dataclass
class Memory:
    """The preference memory of an offline run: per person, one preference per key (a newer one
    supersedes), with the owner kept on every item so leakage is measurable."""

    items: dict[str, dict[str, tuple[str, Preference]]] = field(default_factory=dict)

    def remember(self, owner: str, preference: Preference) -> None:
        self.items.setdefault(owner, {})[preference.key] = (owner, preference)

    def recall(self, person: str) -> list[tuple[str, Preference]]:
        return list(self.items.get(person, {}).values())


@dataclass
class TurnRecord:
    decision: dict[str, Any]
    output: AgentOutput
    memory_owners: tuple[str, ...] = ()


class OfflineAgent:
    """One agent working through episodes. Keeps the session's question count, the memory (if
    enabled) and a learning policy's state across episodes."""

    def __init__(
        self,
        *,
        policy: str | Policy,
        signals: SignalSource,
        today: date,
        memory: Memory | None = None,
        seed: int = 0,
    ) -> None:
        if isinstance(policy, str):
            policy = get_policy(policy, seed=seed) if policy == "bandit" else get_policy(policy)
        self.policy: Policy = policy
        self.source = signals
        self.today = today
        self.memory = memory
        self.asked_in_session: dict[tuple[str, int], int] = {}
        self._reset(None)

    def _reset(self, episode: Episode | None) -> None:
        self.episode = episode
        self.template = (
            get_template(episode.task.template) if episode and episode.task.template else None
        )
        self.answers: dict[str, str] = {}
        self.chat: list[str] = []
        self.asked_in_episode = 0
        self.changes = 0
        self.document = episode.task.document if episode else ""
        self.enforced: list[Preference] = []
        self.last: Decision | None = None

    # --- the episode ------------------------------------------------------------------------

    def start(self, episode: Episode) -> None:
        self._reset(episode)

    def _situation(self, preferences: Sequence[str]) -> Situation:
        assert self.episode is not None
        known = dict(self.answers)
        extraction, signals = self.source.signals(
            episode=self.episode, template=self.template, known=known
        )
        key = (self.episode.user, self.episode.session)
        situation = build_situation(
            request=self.episode.request,
            template=self.template,
            answers=self.answers,
            chat=self.chat,
            document=self.document,
            memory=list(preferences),
            extraction=extraction,
            signals=signals,
            budget=AskingBudget(
                asked_in_episode=self.asked_in_episode,
                asked_in_session=self.asked_in_session.get(key, 0),
            ),
            changes_in_episode=self.changes,
            today=self.today,
        )
        if self.source.mode == "oracle":
            situation = oracle_slots(situation, self.episode, self.today)
        return situation

    def _followed(self) -> tuple[list[Preference], tuple[str, ...]]:
        assert self.episode is not None
        remembered = self.memory.recall(self.episode.user) if self.memory else []
        owners = tuple(owner for owner, _ in remembered)
        return [p for _, p in remembered] + self.enforced, owners

    def _values(self, situation: Situation, decision: Decision) -> dict[str, str]:
        values = {s.name: s.value for s in situation.slots if s.answered and s.value}
        for assumption in decision.assumptions:
            values.setdefault(assumption.slot, assumption.value)
        for state in situation.slots:  # required slots nobody gave: the writer picks
            if state.name not in values and state.spec.required:
                choices = state.spec.choices
                values[state.name] = choices[0] if choices else "to be decided"
        return {k: str(v) for k, v in values.items()}

    def _lines(self, values: Mapping[str, str]) -> list[SlotLine]:
        lines = []
        specs = list(self.template.slots) if self.template else []
        for spec in specs:
            if spec.name in values:
                lines.append(SlotLine(spec.display.capitalize(), values[spec.name]))
        for name, value in values.items():
            if not any(s.name == name for s in specs):
                lines.append(SlotLine(name.replace("_", " ").capitalize(), value))
        return lines

    def turn(self) -> TurnRecord:
        """One agent turn on the current episode state."""
        assert self.episode is not None
        followed, owners = self._followed()
        situation = self._situation([p.text for p in followed])
        decision = self.policy.decide(situation)
        self.last = decision
        key = (self.episode.user, self.episode.session)
        if decision.action == "ask":
            self.asked_in_episode += 1
            self.asked_in_session[key] = self.asked_in_session.get(key, 0) + 1
            output = AgentOutput(
                action="ask",
                text=question_message(decision.questions),
                questions=tuple(AskedQuestion(q.text, tuple(q.slots)) for q in decision.questions),
            )
            return TurnRecord(decision.to_dict(), output, ())
        values = self._values(situation, decision)
        document = write_document(
            title=self.episode.task.title,
            template=self.episode.task.template,
            lines=self._lines(values),
            follow=followed,
        )
        self.changes += 1
        if decision.action == "act":
            self.document = document
        output = AgentOutput(
            action=decision.action, text=decision.assumption_text, document=document, values=values
        )
        return TurnRecord(decision.to_dict(), output, owners)

    def hear(self, reply: Reply, output: AgentOutput, preferences: Sequence[Preference]) -> None:
        """Take in the person's reply: answers and corrections, accepted suggestions, enforced
        preferences (remembered when memory is on)."""
        assert self.episode is not None
        self.answers.update(reply.answers)
        if reply.text:
            self.chat.append(reply.text)
        if reply.accepted:
            self.document = output.document
        by_id = {p.id: p for p in preferences}
        for pref_id in reply.enforced:
            pref = by_id[pref_id]
            self.enforced.append(pref)
            if self.memory is not None:
                self.memory.remember(self.episode.user, pref)

    def feedback(self, kind: FeedbackKind) -> float | None:
        """The person's feedback on the last move (``users.feedback_for``): a learning policy
        learns its reward (``REWARDS``), as the app's ``record_feedback`` teaches the persisted
        state. Returns the reward learned, if any."""
        if not isinstance(self.policy, LearningPolicy) or self.last is None:
            return None
        reward = REWARDS[kind]
        self.policy.learn(self.last, reward)
        return reward


def normalised(template: TaskTemplate | None, slot: str, value: str, today: date) -> str:
    spec = template.slot(slot) if template else None
    return (normalise(value, spec, today=today) if spec else None) or value
