"""The clarification-policy interface: a `Situation` in, a `Decision` out.

Pure Python on purpose (no Django, no ORM, no network): the turn engine builds a Situation from
the task, the chat, the document, memory and model signals, asks a policy for a Decision, and
stores `decision.to_dict()` (with `situation.to_dict()`) on the Turn so that a reviewer can replay
and judge it. See docs/policies.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast, get_args

Action = Literal["ask", "suggest", "act"]
ACTIONS: tuple[Action, ...] = ("ask", "suggest", "act")

SlotType = Literal["date", "number", "money", "place", "person", "choice", "text"]
SLOT_TYPES: tuple[SlotType, ...] = get_args(SlotType)

# Where a slot value came from. "request", "chat", "document" and "memory" are ANSWERS: a policy
# never asks about a slot they fill. "model" (structured extraction or sampled interpretations)
# and "default" (the template's default) are GUESSES: acting on them states an assumption.
SlotSource = Literal["request", "chat", "document", "memory", "model", "default"]
SLOT_SOURCES: tuple[SlotSource, ...] = get_args(SlotSource)
ANSWERING_SOURCES: frozenset[str] = frozenset({"request", "chat", "document", "memory"})

# The person's standing preference, kept in memory ("ask me more / less", "just go ahead").
AskPreference = Literal["less", "normal", "more", "never"]
ASK_PREFERENCES: tuple[AskPreference, ...] = get_args(AskPreference)


@dataclass(frozen=True)
class SlotSpec:
    """One slot of a task template (what the task needs to know)."""

    name: str
    type: SlotType = "text"
    required: bool = True
    label: str = ""
    question: str = ""
    choices: tuple[str, ...] = ()
    default: str | None = None
    aliases: tuple[str, ...] = ()
    # choice -> other words meaning that choice ("cheap" -> "budget").
    choice_aliases: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # For numbers: unit words that mark this slot ("people", "nights").
    units: tuple[str, ...] = ()
    # Words that introduce a value in running text ("to" Lisbon, "with" Ana, "about" X).
    cues: tuple[str, ...] = ()
    # Relative cost of getting this slot wrong (1.0 = redoing the main part of the work).
    weight: float = 1.0
    # What the slot means and a few values it could take, matched by meaning (embeddings).
    description: str = ""
    examples: tuple[str, ...] = ()
    from_title: bool = False  # the task's title names it ("Year 9 — Climate change": subject)

    @property
    def display(self) -> str:
        return self.label or self.name.replace("_", " ")

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "required": self.required,
            "label": self.label,
            "question": self.question,
            "choices": list(self.choices),
            "default": self.default,
            "aliases": list(self.aliases),
            "choice_aliases": {k: list(v) for k, v in self.choice_aliases.items()},
            "units": list(self.units),
            "cues": list(self.cues),
            "weight": self.weight,
            "description": self.description,
            "examples": list(self.examples),
            "from_title": self.from_title,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SlotSpec:
        slot_type = str(data.get("type", "text"))
        if slot_type not in SLOT_TYPES:
            raise ValueError(f"unknown slot type {slot_type!r}")
        return cls(
            name=str(data["name"]),
            type=cast(SlotType, slot_type),
            required=bool(data.get("required", True)),
            label=str(data.get("label", "")),
            question=str(data.get("question", "")),
            choices=tuple(str(c) for c in data.get("choices", ())),
            default=None if data.get("default") is None else str(data["default"]),
            aliases=tuple(str(a) for a in data.get("aliases", ())),
            choice_aliases={
                str(k): tuple(str(x) for x in v)
                for k, v in dict(data.get("choice_aliases", {})).items()
            },
            units=tuple(str(u) for u in data.get("units", ())),
            cues=tuple(str(c) for c in data.get("cues", ())),
            weight=float(data.get("weight", 1.0)),
            description=str(data.get("description", "")),
            examples=tuple(str(e) for e in data.get("examples", ())),
            from_title=bool(data.get("from_title", False)),
        )


@dataclass(frozen=True)
class SlotState:
    """A slot and what is known about it, with where that came from and how sure we are."""

    spec: SlotSpec
    value: str | None = None
    source: SlotSource | None = None
    confidence: float = 0.0

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def answered(self) -> bool:
        """True when the person (request, chat, document) or their memory already gave it."""
        return self.value is not None and self.source in ANSWERING_SOURCES

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec.to_dict(),
            "value": self.value,
            "source": self.source,
            "confidence": self.confidence,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SlotState:
        source = data.get("source")
        if source is not None and source not in SLOT_SOURCES:
            raise ValueError(f"unknown slot source {source!r}")
        return cls(
            spec=SlotSpec.from_dict(data["spec"]),
            value=None if data.get("value") is None else str(data["value"]),
            source=cast("SlotSource | None", source),
            confidence=float(data.get("confidence", 0.0)),
        )


@dataclass(frozen=True)
class Interpretation:
    """One sampled reading of the request: a summary and a value per slot it fills."""

    summary: str
    values: Mapping[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary, "values": dict(self.values)}


@dataclass(frozen=True)
class Signals:
    """What the model said about the request (filled by the engine through agents/llm/)."""

    # llm_judge: ambiguity in [0, 1], why, and which slots it finds unclear.
    ambiguity: float | None = None
    ambiguity_reason: str = ""
    unclear_slots: tuple[str, ...] = ()
    suggested_question: str = ""
    # intent_sampling: k independently sampled structured interpretations.
    interpretations: tuple[Interpretation, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "ambiguity": self.ambiguity,
            "ambiguity_reason": self.ambiguity_reason,
            "unclear_slots": list(self.unclear_slots),
            "suggested_question": self.suggested_question,
            "interpretations": [i.to_dict() for i in self.interpretations],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Signals:
        ambiguity = data.get("ambiguity")
        return cls(
            ambiguity=None if ambiguity is None else float(ambiguity),
            ambiguity_reason=str(data.get("ambiguity_reason", "")),
            unclear_slots=tuple(str(s) for s in data.get("unclear_slots", ())),
            suggested_question=str(data.get("suggested_question", "")),
            interpretations=tuple(
                Interpretation(
                    summary=str(i.get("summary", "")),
                    values={str(k): str(v) for k, v in dict(i.get("values", {})).items()},
                )
                for i in data.get("interpretations", ())
            ),
        )


@dataclass(frozen=True)
class AskingBudget:
    """How many questions this person may still be asked, and how they like to be asked.

    An *episode* is one request being worked on until it is done; a *session* is the person's
    current stretch of work with this agent (the engine decides where sessions end).
    """

    per_episode: int = 2
    per_session: int = 6
    asked_in_episode: int = 0
    asked_in_session: int = 0
    preference: AskPreference = "normal"
    # "at most N questions" (memory key asking = at_most:N): caps the episode limit.
    at_most: int | None = None

    @property
    def episode_limit(self) -> int:
        """The episode limit after the person's preference: "less" halves it (at least one
        question stays possible for a real blocker), "more" adds one, "never" is 0, and
        "at most N" caps it at N."""
        if self.preference == "never":
            limit = 0
        elif self.preference == "less":
            limit = max(1, self.per_episode // 2)
        elif self.preference == "more":
            limit = self.per_episode + 1
        else:
            limit = self.per_episode
        return limit if self.at_most is None else min(limit, max(0, self.at_most))

    @property
    def session_limit(self) -> int:
        if self.preference == "never":
            return 0
        if self.preference == "less":
            return self.per_session // 2
        if self.preference == "more":
            return self.per_session + 2
        return self.per_session

    @property
    def remaining(self) -> int:
        return max(
            0,
            min(
                self.episode_limit - self.asked_in_episode,
                self.session_limit - self.asked_in_session,
            ),
        )

    @property
    def can_ask(self) -> bool:
        return self.remaining > 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "per_episode": self.per_episode,
            "per_session": self.per_session,
            "asked_in_episode": self.asked_in_episode,
            "asked_in_session": self.asked_in_session,
            "preference": self.preference,
            "at_most": self.at_most,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AskingBudget:
        preference = str(data.get("preference", "normal"))
        if preference not in ASK_PREFERENCES:
            raise ValueError(f"unknown asking preference {preference!r}")
        return cls(
            per_episode=int(data.get("per_episode", 2)),
            per_session=int(data.get("per_session", 6)),
            asked_in_episode=int(data.get("asked_in_episode", 0)),
            asked_in_session=int(data.get("asked_in_session", 0)),
            preference=cast(AskPreference, preference),
            at_most=None if data.get("at_most") is None else int(data["at_most"]),
        )


@dataclass(frozen=True)
class Conflict:
    """Two sources state different values for one slot ("the goal says 12, the document 15")."""

    slot: str
    values: tuple[tuple[str, str], ...]  # (source, value), in the order they are named

    def to_dict(self) -> dict[str, Any]:
        return {"slot": self.slot, "values": [list(v) for v in self.values]}


@dataclass(frozen=True)
class Ambiguity:
    """A stated value with several plausible readings (a shared place name, "03/04", "the
    usual room"); `readings` are the choices the context supports (may be empty)."""

    slot: str
    text: str
    readings: tuple[str, ...] = ()
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "text": self.text,
            "readings": list(self.readings),
            "reason": self.reason,
        }


@dataclass(frozen=True)
class Situation:
    """Everything a policy may look at for one turn."""

    request: str
    template: str | None = None  # task template kind, None for free-form tasks
    slots: tuple[SlotState, ...] = ()
    signals: Signals = field(default_factory=Signals)
    budget: AskingBudget = field(default_factory=AskingBudget)
    # A question was asked and nobody answered within the configured time: proceed, don't re-ask.
    timed_out: bool = False
    # Changes (edits, suggestions, replies with content) already made in this episode.
    changes_in_episode: int = 0
    # Values stated twice, differently; values with several readings.
    conflicts: tuple[Conflict, ...] = ()
    ambiguities: tuple[Ambiguity, ...] = ()
    # False when the request needs none of the template's values (summarise, suggest a title,
    # what next): then nothing blocks it.
    needs_slots: bool = True
    # Slots the agent already asked about in this task and nobody answered: never asked again.
    asked_before: tuple[str, ...] = ()
    # Model signals not believed (they contradicted a sure detector reading), one line each.
    ignored_signals: tuple[str, ...] = ()

    def slot(self, name: str) -> SlotState | None:
        for state in self.slots:
            if state.name == name:
                return state
        return None

    @property
    def unresolved(self) -> tuple[SlotState, ...]:
        """Slots not answered by the request, chat, document or memory (guesses included)."""
        return tuple(s for s in self.slots if not s.answered)

    def to_dict(self) -> dict[str, Any]:
        return {
            "request": self.request,
            "template": self.template,
            "slots": [s.to_dict() for s in self.slots],
            "signals": self.signals.to_dict(),
            "budget": self.budget.to_dict(),
            "timed_out": self.timed_out,
            "changes_in_episode": self.changes_in_episode,
            "conflicts": [c.to_dict() for c in self.conflicts],
            "ambiguities": [a.to_dict() for a in self.ambiguities],
            "needs_slots": self.needs_slots,
            "asked_before": list(self.asked_before),
            "ignored_signals": list(self.ignored_signals),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Situation:
        return cls(
            request=str(data.get("request", "")),
            template=None if data.get("template") is None else str(data["template"]),
            slots=tuple(SlotState.from_dict(s) for s in data.get("slots", ())),
            signals=Signals.from_dict(data.get("signals", {})),
            budget=AskingBudget.from_dict(data.get("budget", {})),
            timed_out=bool(data.get("timed_out", False)),
            changes_in_episode=int(data.get("changes_in_episode", 0)),
            conflicts=tuple(
                Conflict(
                    slot=str(c["slot"]),
                    values=tuple((str(v[0]), str(v[1])) for v in c.get("values", ())),
                )
                for c in data.get("conflicts", ())
            ),
            ambiguities=tuple(
                Ambiguity(
                    slot=str(a["slot"]),
                    text=str(a.get("text", "")),
                    readings=tuple(str(r) for r in a.get("readings", ())),
                    reason=str(a.get("reason", "")),
                )
                for a in data.get("ambiguities", ())
            ),
            needs_slots=bool(data.get("needs_slots", True)),
            asked_before=tuple(str(s) for s in data.get("asked_before", ())),
            ignored_signals=tuple(str(s) for s in data.get("ignored_signals", ())),
        )


@dataclass(frozen=True)
class Question:
    """One question of the (single) question message of a turn."""

    text: str
    slots: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()
    allow_other: bool = True  # a free-text answer is accepted besides the choices

    def to_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "slots": list(self.slots),
            "choices": list(self.choices),
            "allow_other": self.allow_other,
        }


@dataclass(frozen=True)
class Assumption:
    """A guessed slot value the agent proceeds with, shown to people as "I assumed X"."""

    slot: str
    value: str
    source: SlotSource | None = None
    label: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"slot": self.slot, "value": self.value, "source": self.source, "label": self.label}


@dataclass(frozen=True)
class Decision:
    """What the policy chose, why, and with which numbers."""

    action: Action
    policy: str
    ask_slots: tuple[str, ...] = ()
    questions: tuple[Question, ...] = ()
    assumptions: tuple[Assumption, ...] = ()
    assumption_text: str = ""  # "I assumed X", empty when nothing was guessed
    scores: Mapping[str, float] = field(default_factory=dict)
    rationale: str = ""
    # Probability the policy gave each action (deterministic policies: 1.0 on the chosen one).
    # Logged for offline evaluation (inverse propensity scoring).
    probabilities: Mapping[str, float] = field(default_factory=dict)
    # Context features the decision was made on (learning policies use them for feedback).
    features: tuple[float, ...] = ()

    def __post_init__(self) -> None:
        if self.action not in ACTIONS:
            raise ValueError(f"unknown action {self.action!r}")
        if self.action == "ask" and not self.questions:
            raise ValueError("an ask decision needs at least one question")
        if not self.probabilities:
            object.__setattr__(self, "probabilities", {a: float(a == self.action) for a in ACTIONS})

    @property
    def probability(self) -> float:
        """The probability with which the chosen action was taken (its propensity)."""
        return float(self.probabilities.get(self.action, 0.0))

    def to_dict(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "policy": self.policy,
            "ask_slots": list(self.ask_slots),
            "questions": [q.to_dict() for q in self.questions],
            "assumptions": [a.to_dict() for a in self.assumptions],
            "assumption_text": self.assumption_text,
            "scores": {k: float(v) for k, v in self.scores.items()},
            "rationale": self.rationale,
            "probabilities": {k: float(v) for k, v in self.probabilities.items()},
            "features": list(self.features),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Decision:
        action = str(data["action"])
        if action not in ACTIONS:
            raise ValueError(f"unknown action {action!r}")
        return cls(
            action=cast(Action, action),
            policy=str(data.get("policy", "")),
            ask_slots=tuple(str(s) for s in data.get("ask_slots", ())),
            questions=tuple(
                Question(
                    text=str(q["text"]),
                    slots=tuple(str(s) for s in q.get("slots", ())),
                    choices=tuple(str(c) for c in q.get("choices", ())),
                    allow_other=bool(q.get("allow_other", True)),
                )
                for q in data.get("questions", ())
            ),
            assumptions=tuple(
                Assumption(
                    slot=str(a["slot"]),
                    value=str(a["value"]),
                    source=cast("SlotSource | None", a.get("source")),
                    label=str(a.get("label", "")),
                )
                for a in data.get("assumptions", ())
            ),
            assumption_text=str(data.get("assumption_text", "")),
            scores={str(k): float(v) for k, v in dict(data.get("scores", {})).items()},
            rationale=str(data.get("rationale", "")),
            probabilities={
                str(k): float(v) for k, v in dict(data.get("probabilities", {})).items()
            },
            features=tuple(float(x) for x in data.get("features", ())),
        )
