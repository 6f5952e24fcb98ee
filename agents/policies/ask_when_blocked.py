"""`ask_when_blocked` (the default, `DEFAULT_POLICY`): ask only about what blocks the work, in
one message, and say what was assumed otherwise.

What blocks, in the order a question names it:

1. a conflict: the request (or the task's goal) and the document state different values, or
   the document states two ("The goal says 12 people, the document 15: which is right?");
2. an ambiguity: a stated value with several plausible readings (a place name several cities
   share, a numeric date such as 03/04, "the usual room" that memory does not resolve);
3. a required value that nothing states (request, goal, chat, document, the requester's memory)
   and that has no template default. A confident reading from the model counts as stated.

Never asked: a request that needs no template value (summarise, suggest a title, what next); a
value the request, the chat, the document or memory states; a question already asked in this
task that nobody answered (the agent goes ahead and says what it assumed); anything once the
requester's asking budget is spent ("ask me less" halves it, "at most N", "just go ahead" = 0)
or after a question timed out. Choices are offered only when they come from the context (the
two conflicting values, the readings, the template's own choices).

When it acts, every value it uses without asking that is not a template default is stated as
an assumption ("I assumed ...").
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.policies.asking import MAX_QUESTIONS_PER_MESSAGE, assumption_text, question_for
from agents.policies.base import Assumption, Decision, Question, Situation
from agents.policies.registry import register
from agents.policies.scoring import best_guess
from agents.policies.situation_sources import display_value

# A model reading at least this sure is used (and stated) instead of asked about.
GUESS_OK = 0.7
# What a required value nobody gave holds until someone says (stated: "I chose the X myself").
OPEN_VALUE = "to be decided"

_WHERE = {
    "your message": "Your message",
    "the goal": "The goal",
    "the chat": "The chat",
    "the document": "the document",
    "your memory": "what you told me before",
}


@dataclass(frozen=True)
class Blocker:
    kind: str  # conflict | ambiguity | missing
    slot: str
    question: Question
    weight: float


def _conflict_question(
    situation: Situation, slot: str, values: tuple[tuple[str, str], ...]
) -> Question:
    state = situation.slot(slot)
    what = state.spec.display if state else slot.replace("_", " ")
    shown = [(where, display_value(v, state.spec) if state else v) for where, v in values]
    (where_a, a), (where_b, b) = shown[0], shown[1]
    first = _WHERE.get(where_a, where_a).capitalize()
    second = _WHERE.get(where_b, where_b)
    unit = state.spec.units[0] if state and state.spec.type == "number" and state.spec.units else ""
    if where_a == where_b:
        text = f"{first} gives the {what} as {a} and as {b}: which is right?"
    elif unit:  # "Your message says 12 people, the document 15: which is right?"
        text = f"{first} says {a} {unit}, {second} {b}: which is right?"
    else:
        text = f"{first} says the {what} is {a}, {second} {b}: which is right?"
    return Question(text=text, slots=(slot,), choices=(a, b), allow_other=True)


def _ambiguity_question(
    situation: Situation, slot: str, text: str, readings: tuple[str, ...], reason: str
) -> Question:
    """'Which do you mean by "next Friday" for the meeting date?' (the slot is named, so the
    answer maps back to it)."""
    state = situation.slot(slot)
    what = state.spec.display if state else slot.replace("_", " ")
    if readings:
        return Question(
            text=f'Which do you mean by "{text}" for the {what}?',
            slots=(slot,),
            choices=readings,
            allow_other=True,
        )
    return Question(
        text=f'What do you mean by "{text}" for the {what}?', slots=(slot,), allow_other=True
    )


def blockers(situation: Situation) -> list[Blocker]:
    """What stops the work, conflicts first, then ambiguities, then missing values."""
    if not situation.needs_slots:
        return []
    out: list[Blocker] = []
    seen: set[str] = set()
    for conflict in situation.conflicts:
        if len(conflict.values) >= 2:
            out.append(
                Blocker(
                    "conflict",
                    conflict.slot,
                    _conflict_question(situation, conflict.slot, conflict.values),
                    2.0,
                )
            )
            seen.add(conflict.slot)
    for ambiguity in situation.ambiguities:
        if ambiguity.slot in seen:
            continue
        out.append(
            Blocker(
                "ambiguity",
                ambiguity.slot,
                _ambiguity_question(
                    situation, ambiguity.slot, ambiguity.text, ambiguity.readings, ambiguity.reason
                ),
                1.5,
            )
        )
        seen.add(ambiguity.slot)
    for state in situation.unresolved:
        spec = state.spec
        # A required value with a template default does not block: the default is used and
        # stated as an assumption ("I assumed the organisation is by theme"), as the module
        # says; asking for it over-asked on requests people wrote (blind dev: over-asking
        # 0.38 -> 0.31, ask MCC 0.31 -> 0.32). An optional value never blocks.
        if state.name in seen or not spec.required:
            continue
        if state.value is not None and state.confidence >= GUESS_OK:
            continue
        guess = best_guess(state, situation.signals.interpretations)
        if guess.value is not None and (guess.confidence >= GUESS_OK or guess.source == "default"):
            continue
        out.append(Blocker("missing", state.name, question_for(state), spec.weight))
    return out


def _assumptions(
    situation: Situation, skipped: set[str]
) -> tuple[tuple[Assumption, ...], list[str]]:
    """Values used without asking that are not template defaults, and required values nobody
    gave that the agent will choose itself."""
    assumptions: list[Assumption] = []
    unknown: list[str] = []
    by_conflict = {c.slot: c for c in situation.conflicts}
    for state in situation.slots:
        spec = state.spec
        if state.name in by_conflict and state.value is not None:
            others = [v for _w, v in by_conflict[state.name].values if v != state.value]
            note = f" (not {display_value(others[0], spec)})" if others else ""
            assumptions.append(
                Assumption(
                    state.name, display_value(state.value, spec) + note, state.source, spec.display
                )
            )
            continue
        if state.answered:
            continue
        guess = best_guess(state, situation.signals.interpretations)
        if guess.value is None:
            if spec.required and (situation.needs_slots or state.name in skipped):
                unknown.append(spec.display)  # said: "I chose the <slot> myself"
                assumptions.append(Assumption(state.name, OPEN_VALUE, None, spec.display))
            continue
        if guess.source == "default" and not spec.required and state.name not in skipped:
            continue  # an optional slot's default is what the template promises
        assumptions.append(
            Assumption(state.name, display_value(guess.value, spec), guess.source, spec.display)
        )
    return tuple(assumptions), unknown


@register("ask_when_blocked")
class AskWhenBlocked:
    name = "ask_when_blocked"

    def decide(self, situation: Situation) -> Decision:
        found = blockers(situation)
        repeated = [b for b in found if b.slot in situation.asked_before]
        fresh = [b for b in found if b.slot not in situation.asked_before]
        budget = situation.budget
        limit = min(budget.remaining, MAX_QUESTIONS_PER_MESSAGE)
        scores = {
            "blockers": float(len(found)),
            "repeated": float(len(repeated)),
            "remaining_budget": float(budget.remaining),
        }
        if fresh and limit > 0 and not situation.timed_out:
            asked = fresh[:limit]
            names = ", ".join(f"{b.slot} ({b.kind})" for b in asked)
            return Decision(
                action="ask",
                policy=self.name,
                ask_slots=tuple(b.slot for b in asked),
                questions=tuple(b.question for b in asked),
                scores=scores,
                rationale=f"Blocked by {names}; asking once, in one message.",
            )
        why = "Nothing blocks the work."
        if not situation.needs_slots:
            why = "The request needs none of the task's values."
        elif fresh and situation.timed_out:
            why = "The last question timed out: going ahead on the best reading."
        elif fresh:
            why = f"Blocked by {len(fresh)} value(s), but the asking budget is spent."
        elif repeated:
            why = "Already asked and nobody answered: not asking again."
        assumptions, unknown = _assumptions(situation, {b.slot for b in found})
        return Decision(
            action="act",
            policy=self.name,
            assumptions=assumptions,
            assumption_text=assumption_text(
                [a for a in assumptions if a.value != OPEN_VALUE],
                timed_out=situation.timed_out,
                unknown=unknown,
            ),
            scores=scores,
            rationale=why,
        )
