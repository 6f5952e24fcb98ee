"""Simulated users: they know what they want (the episode's hidden slot values and their
preferences) and answer the agent the way a patient, consistent person would.

`ScriptedUser` is deterministic. `LLMUser` takes the scripted user's decision (what to answer,
whether to accept) and lets a chat model word the reply in the persona's voice, so metrics stay
defined while the agent faces varied language.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from agents.evaluation.checks import adheres, passes, words
from agents.evaluation.scenario import Episode, Preference, User
from agents.policies.detect import normalise
from agents.policies.templates import TaskTemplate, TemplateError, get_template

ReplyKind = Literal["answer", "accept", "reject", "correct", "enforce", "done", "give_up"]
# What the person clicks on the agent's move; the names are the keys of
# agents.policies.bandit.REWARDS (the reward a learning policy gets for each).
FeedbackKind = Literal["up", "down", "unnecessary_question"]


@dataclass(frozen=True)
class AskedQuestion:
    """One question of the agent's question message, with the slots it is tagged with."""

    text: str
    slots: tuple[str, ...] = ()
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class AgentOutput:
    """What the agent did in one turn, as the simulated user sees it."""

    action: Literal["ask", "suggest", "act", "reply"]
    text: str = ""
    questions: tuple[AskedQuestion, ...] = ()
    document: str = ""  # act: the document now; suggest: the proposed document
    values: Mapping[str, str] = field(default_factory=dict)  # slot -> value the agent used


@dataclass
class Reply:
    kind: ReplyKind
    text: str = ""
    answers: dict[str, str] = field(default_factory=dict)  # slot -> value given in this reply
    asked_slots: tuple[str, ...] = ()
    redundant: int = 0  # question targets the person had already stated
    irrelevant: int = 0  # question targets the person has no view on (or untargeted)
    wrong_slots: tuple[str, ...] = ()
    enforced: tuple[str, ...] = ()  # preference ids enforced in this reply
    accepted: bool = False
    redundant_slots: tuple[str, ...] = ()  # targets the agent could already know

    @property
    def words(self) -> int:
        return words(self.text)

    @property
    def ends_episode(self) -> bool:
        return self.kind in ("done", "give_up")


def _shipped(kind: str | None) -> TaskTemplate | None:
    try:
        return get_template(kind) if kind else None
    except TemplateError:
        return None


def _label(template: TaskTemplate | None, slot: str) -> str:
    spec = template.slot(slot) if template else None
    return spec.display if spec else slot.replace("_", " ")


def _terms(template: TaskTemplate | None, slot: str) -> list[str]:
    spec = template.slot(slot) if template else None
    if spec is None:
        return [slot.replace("_", " ")]
    return [t for t in (spec.name.replace("_", " "), spec.label, *spec.aliases) if t]


def same_value(template: TaskTemplate | None, slot: str, a: str, b: str, today: date) -> bool:
    """Whether two values of a slot mean the same (normalised through the slot's type)."""
    spec = template.slot(slot) if template else None
    if spec is not None:
        na, nb = normalise(a, spec, today=today), normalise(b, spec, today=today)
        if na is not None and nb is not None:
            return na.casefold() == nb.casefold()

    def squash(x: str) -> str:
        return " ".join(re.sub(r"[^\w\s]", " ", x.casefold()).split())

    return squash(a) == squash(b)


class ScriptedUser:
    """A deterministic person for one episode.

    - Answers only the slots a question targets: by its slot tags, else by the slot names and
      aliases the question mentions. A target the request already stated is marked redundant; a
      target the person has no value for (or a question with no target) is marked irrelevant.
    - Accepts a suggestion whose slot values are right and rejects a wrong one, correcting it.
    - After an edit: corrects wrong slot values, then enforces every violated preference by
      restating it, else says it is done.
    - Gives up after `patience` replies.
    """

    def __init__(
        self,
        *,
        user: User,
        episode: Episode,
        preferences: Sequence[Preference],
        today: date,
        knowable: Sequence[str] | None = None,
    ) -> None:
        self.user = user
        self.episode = episode
        self.preferences = tuple(preferences)  # the ones this episode is scored on
        self.today = today
        self.template = episode.template_def or _shipped(episode.task.template)
        self.replies = 0
        # Slots the agent can already know (stated in the request or the document, inferable
        # from the context, in the memory handed to it): asking about them is redundant unless
        # the statement is ambiguous or contradicted. Format 1: the stated slots.
        unclear = {*episode.readings, *(c.slot for c in episode.conflicts)}
        known = list(episode.stated) if knowable is None else list(knowable)
        self.given: dict[str, str] = {
            s: episode.slots.get(s, episode.stated.get(s, "")) for s in known if s not in unclear
        }
        self.answered_once = False
        self.questions_seen = 0
        self.asking_enforced = False

    def asking_limit(self) -> int | None:
        """How many question messages the person accepts in an episode (None: no preference)."""
        return asking_limit(self.preferences)

    # --- what the agent got wrong -----------------------------------------------------------

    def wrong_slots(self, output: AgentOutput) -> list[str]:
        """Slots whose success check fails on the document (or, without a check, whose value
        the agent used differs from the hidden one)."""
        wrong = []
        checked = set()
        for check in self.episode.success:
            slot = check.get("slot")
            if slot:
                checked.add(slot)
                if not passes(check, output.document):
                    wrong.append(str(slot))
        for slot, value in self.episode.slots.items():
            used = output.values.get(slot)
            if (
                slot not in checked
                and used is not None
                and not same_value(self.template, slot, used, value, self.today)
            ):
                wrong.append(slot)
        return wrong

    def failing_checks(self, document: str) -> list[Mapping[str, Any]]:
        return [c for c in self.episode.success if not c.get("slot") and not passes(c, document)]

    def violated(self, document: str) -> list[Preference]:
        """The preferences the agent's work breaks, judged as the metrics judge them
        (``checks.adheres``): the person does not restate a style wish because of their own
        notes, kept as they asked."""
        before = self.episode.task.document
        return [
            p
            for p in self.preferences
            if p.check is not None and not adheres(p.check, document, before=before)
        ]

    # --- replies ------------------------------------------------------------------------------

    def _targets(self, question: AskedQuestion) -> tuple[str, ...]:
        if question.slots:
            return question.slots
        text = question.text.casefold()
        names = list(self.template.slots) if self.template else []
        candidates = [s.name for s in names] or list(self.episode.slots)
        return tuple(
            slot
            for slot in candidates
            if any(
                re.search(rf"(?<!\w){re.escape(t.casefold())}(?!\w)", text)
                for t in _terms(self.template, slot)
            )
        )

    def answer(self, questions: Sequence[AskedQuestion]) -> Reply:
        parts: list[str] = []
        reply = Reply(kind="answer")
        asked: list[str] = []
        for question in questions:
            targets = self._targets(question)
            if not targets:
                reply.irrelevant += 1
                parts.append("Not sure what you mean there; use your judgement.")
            for slot in targets:
                asked.append(slot)
                label = _label(self.template, slot)
                if slot in self.given:
                    reply.redundant += 1
                    reply.redundant_slots += (slot,)
                    value = self.episode.slots.get(slot, self.given[slot])
                    parts.append(f"I already said: the {label} is {value}.")
                elif slot in self.episode.slots:
                    value = self.episode.slots[slot]
                    reply.answers[slot] = value
                    self.given[slot] = value
                    said = self.episode.slot_replies.get(slot) or f"{label.capitalize()}: {value}."
                    parts.append(said)
                else:
                    reply.irrelevant += 1
                    parts.append(f"No preference on the {label}; your call.")
        if self.episode.reply_extra and not self.answered_once and reply.answers:
            parts.append(self.episode.reply_extra)
        self.answered_once = self.answered_once or bool(reply.answers)
        limit = self.asking_limit()
        if limit is not None and self.questions_seen > limit and not self.asking_enforced:
            pref = next(p for p in self.preferences if p.key == "asking")
            reply.enforced += (pref.id,)
            self.asking_enforced = True
            parts.append(f"And remember: {pref.text[0].lower()}{pref.text[1:]}")
        reply.asked_slots = tuple(asked)
        reply.text = " ".join(parts)
        return reply

    def _corrections(self, output: AgentOutput, reply: Reply) -> list[str]:
        parts = []
        wrong = self.wrong_slots(output)
        for slot in wrong:
            value = self.episode.slots[slot]
            reply.answers[slot] = value
            self.given[slot] = value
            parts.append(f"The {_label(self.template, slot)} should be {value}.")
        for check in self.failing_checks(output.document):
            parts.append(f"The document is missing something: {check.get('type')}.")
        reply.wrong_slots = tuple(wrong)
        return parts

    def _enforcements(self, document: str, reply: Reply) -> list[str]:
        violated = self.violated(document)
        reply.enforced = tuple(p.id for p in violated)
        return [f"Remember that {p.text[0].lower()}{p.text[1:]}" for p in violated]

    def respond(self, output: AgentOutput) -> Reply:
        """The person's reply to one agent turn."""
        self.replies += 1
        reply = self._respond(output)
        if not reply.ends_episode and self.replies > self.user.patience:
            return Reply(kind="give_up", text="Never mind, I'll do it myself.")
        return reply

    def _respond(self, output: AgentOutput) -> Reply:
        if output.action == "ask":
            self.questions_seen += 1
            return self.answer(output.questions)
        if output.action == "reply":  # talked without doing anything
            return Reply(kind="correct", text="Please go ahead and write it.")
        reply = Reply(kind="correct")
        corrections = self._corrections(output, reply)
        if output.action == "suggest":
            if corrections:
                reply.kind = "reject"
                reply.text = "Not quite. " + " ".join(corrections)
                return reply
            reply.accepted = True
            enforcements = self._enforcements(output.document, reply)
            reply.kind = "enforce" if enforcements else "accept"
            reply.text = " ".join(["Looks right, accepted.", *enforcements])
            if not enforcements:
                reply.kind = "done"
            return reply
        enforcements = self._enforcements(output.document, reply)
        if not corrections and not enforcements:
            closing = self.episode.closing.text if self.episode.closing else "Thanks, that's it."
            return Reply(kind="done", text=closing)
        reply.kind = "correct" if corrections else "enforce"
        reply.text = " ".join([*corrections, *enforcements])
        return reply


def asking_limit(preferences: Sequence[Preference]) -> int | None:
    """The question messages per episode an asking preference allows: "never" (just go
    ahead) 0, "at_most:N" N, "less" 1; "more" or none: no limit (None)."""
    for pref in preferences:
        if pref.key != "asking":
            continue
        value = pref.value.casefold().strip()
        if value in ("never", "none", "0"):
            return 0
        if value.startswith("at_most:"):
            try:
                return max(0, int(value.split(":", 1)[1]))
            except ValueError:
                return None
        if value == "less":
            return 1
    return None


def feedback_for(reply: Reply, output: AgentOutput) -> FeedbackKind:
    """The feedback the simulated person gives the agent's move, after replying to it.

    The one mapping both engines use (the offline agent learns ``REWARDS[kind]``; the app engine
    records it through ``record_feedback``, which teaches the persisted policy state):

    - giving up: thumbs down on the move that exhausted the person's patience;
    - a question: thumbs up when it was answered (at least one slot the person had not given)
      and none of its targets was redundant or irrelevant; otherwise "this question was
      unnecessary";
    - a reply that did nothing ("Please go ahead and write it."): thumbs down;
    - a suggestion: thumbs up when accepted (every slot right), thumbs down when rejected;
    - an edit: thumbs up when it needed no correction (every slot right, no missing content;
      restating a preference is no correction), thumbs down when the person corrects it.
    """
    if reply.kind == "give_up":
        return "down"
    if output.action == "ask":
        useful = bool(reply.answers) and not reply.redundant and not reply.irrelevant
        return "up" if useful else "unnecessary_question"
    if output.action == "suggest":
        return "up" if reply.accepted else "down"
    if output.action == "act":
        return "down" if reply.kind == "correct" or reply.wrong_slots else "up"
    return "down"  # a reply that did nothing


class LLMUser(ScriptedUser):
    """The scripted person's decisions, worded by a chat model in the persona's voice.

    `chat_model` is any langchain-core chat model (build it with agents/llm/). If the model
    fails or answers nothing usable, the scripted wording is kept.
    """

    def __init__(self, *, chat_model: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.chat_model = chat_model
        self.tokens = 0

    def respond(self, output: AgentOutput) -> Reply:
        reply = super().respond(output)
        if reply.kind == "done" or not reply.text:
            return reply
        prompt = (
            f"You are {self.user.name}. {self.user.persona}\n"
            "Rewrite the message below in your own words, as a short chat reply to an AI "
            "assistant. Keep every fact, value and request in it; add nothing.\n"
            f"Message:\n<<<\n{reply.text}\n>>>"
        )
        try:
            result = self.chat_model.invoke(prompt)
        except Exception:
            return reply
        text = str(getattr(result, "content", "") or "").strip()
        usage = getattr(result, "usage_metadata", None) or {}
        self.tokens += int(usage.get("total_tokens", 0) or 0)
        if text and len(text) < 1500:
            reply.text = text
        return reply
