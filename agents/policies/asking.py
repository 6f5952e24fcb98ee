"""Asking well: one message of questions per turn, tagged with slots, offering the template's
choices, never about what the request, chat, document or memory already answer; and the visible
"I assumed X" when the agent proceeds on a guess."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from agents.policies.base import (
    Action,
    Assumption,
    Decision,
    Question,
    Situation,
    SlotState,
)
from agents.policies.scoring import best_guess, distinct_values

# At most this many questions in the one question message of a turn.
MAX_QUESTIONS_PER_MESSAGE = 3

_SOURCE_WORDS = {
    "model": "my reading of the request",
    "default": "the usual default",
    "request": "as your message says",
    "chat": "as the chat says",
    "document": "as the document says",
    "memory": "as you told me before",
}


def askable(situation: Situation, names: Iterable[str] | None = None) -> tuple[SlotState, ...]:
    """The slots a policy may ask about: never one the request, chat, document or memory answer.

    With `names`, only those slots (in that order, unknown names ignored); otherwise every
    unresolved slot, required ones first.
    """
    if names is None:
        candidates = sorted(situation.unresolved, key=lambda s: not s.spec.required)
    else:
        candidates = [s for n in dict.fromkeys(names) if (s := situation.slot(n)) is not None]
    return tuple(s for s in candidates if not s.answered)


def question_for(slot: SlotState, extra_choices: Sequence[str] = ()) -> Question:
    """The question for one slot, offering the template's choices (or the sampled values)."""
    spec = slot.spec
    text = spec.question.strip() or _default_question(slot)
    if not text.endswith("?"):
        text = text.rstrip(".") + "?"
    choices = spec.choices or tuple(dict.fromkeys(c for c in extra_choices if c))
    return Question(
        text=text,
        slots=(spec.name,),
        choices=tuple(choices)[:8],
        allow_other=not spec.choices or spec.type != "choice",
    )


def _default_question(slot: SlotState) -> str:
    spec = slot.spec
    what = spec.display
    if spec.type == "date":
        return f"Which date should I use for the {what}?"
    if spec.type in ("number", "money"):
        return f"What {what} should I plan for?"
    if spec.type == "choice" and spec.choices:
        return f"Which {what} would you like?"
    return f"What should the {what} be?"


def compose_questions(
    slots: Sequence[SlotState],
    *,
    sampled_choices: Mapping[str, Sequence[str]] | None = None,
    limit: int = MAX_QUESTIONS_PER_MESSAGE,
) -> tuple[Question, ...]:
    """The questions of one message: one per slot, answered slots dropped, at most `limit`."""
    sampled_choices = sampled_choices or {}
    questions = [question_for(s, sampled_choices.get(s.name, ())) for s in slots if not s.answered]
    return tuple(questions[: max(0, limit)])


def free_question(text: str) -> Question:
    """A question not tied to a template slot (free-form tasks)."""
    text = text.strip() or "What outcome would you like from this?"
    if not text.endswith("?"):
        text = text.rstrip(".") + "?"
    return Question(text=text)


def question_message(questions: Sequence[Question]) -> str:
    """Render the single question message of a turn as markdown."""
    if not questions:
        return ""
    lines = ["Before I start, a quick question:" if len(questions) == 1 else "Before I start:"]
    for index, q in enumerate(questions, start=1):
        prefix = "" if len(questions) == 1 else f"{index}. "
        line = f"{prefix}{q.text}"
        if q.choices:
            line += " (" + " / ".join(q.choices) + (" / other" if q.allow_other else "") + ")"
        lines.append(line)
    return "\n".join(lines)


def assumptions_for(slots: Iterable[SlotState]) -> tuple[Assumption, ...]:
    """The assumptions behind acting now: every unanswered slot with a guessed value."""
    return tuple(
        Assumption(slot=s.name, value=s.value, source=s.source, label=s.spec.display)
        for s in slots
        if not s.answered and s.value is not None
    )


def assumption_text(
    assumptions: Sequence[Assumption], *, timed_out: bool = False, unknown: Sequence[str] = ()
) -> str:
    """The visible, undoable "I assumed X" line shown when the agent proceeds on guesses.

    `unknown` names required things nobody gave and nothing suggests: the agent chooses them.
    """
    if not assumptions and not unknown:
        return ""
    sentences = []
    if assumptions:
        parts = []
        for a in assumptions:
            where = _SOURCE_WORDS.get(a.source or "", "")
            parts.append(f"the {a.label or a.slot} is {a.value}" + (f" ({where})" if where else ""))
        lead = "Nobody answered yet, so I assumed" if timed_out else "I assumed"
        sentences.append(f"{lead} {_join(parts)}.")
    if unknown:
        lead = "Nobody answered, so I chose" if timed_out and not assumptions else "I chose"
        sentences.append(f"{lead} the {_join(list(unknown))} myself.")
    sentences.append("Tell me if that's wrong and I'll redo it.")
    return " ".join(sentences)


def _join(parts: Sequence[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def best_guesses(situation: Situation) -> tuple[SlotState, ...]:
    """Every unanswered slot with its best guess (see scoring.best_guess)."""
    return tuple(best_guess(s, situation.signals.interpretations) for s in situation.unresolved)


def proceed(
    situation: Situation,
    *,
    policy: str,
    action: Action = "act",
    rationale: str,
    scores: Mapping[str, float] | None = None,
    probabilities: Mapping[str, float] | None = None,
    features: tuple[float, ...] = (),
) -> Decision:
    """A decision to act (or suggest) on the best guesses, stating every assumption made."""
    guesses = best_guesses(situation)
    assumptions = assumptions_for(guesses)
    unknown = [s.spec.display for s in guesses if s.value is None and s.spec.required]
    return Decision(
        action=action,
        policy=policy,
        assumptions=assumptions,
        assumption_text=assumption_text(
            assumptions, timed_out=situation.timed_out, unknown=unknown
        ),
        scores=dict(scores or {}),
        rationale=rationale,
        probabilities=dict(probabilities or {}),
        features=features,
    )


def ask(
    situation: Situation,
    *,
    policy: str,
    slots: Sequence[SlotState],
    rationale: str,
    scores: Mapping[str, float] | None = None,
    extra_question: str = "",
    probabilities: Mapping[str, float] | None = None,
    features: tuple[float, ...] = (),
) -> Decision:
    """A decision to ask one message of questions about `slots` (answered ones are dropped).

    Falls back to a free question (`extra_question`) when no slot is left to ask about, and to
    `proceed` when there is nothing to ask at all.
    """
    interpretations = situation.signals.interpretations
    sampled = {s.name: distinct_values(interpretations, s.name) for s in slots}
    questions = compose_questions(slots, sampled_choices=sampled)
    if not questions and extra_question.strip():
        questions = (free_question(extra_question),)
    if not questions:
        return proceed(
            situation,
            policy=policy,
            rationale=rationale + " Nothing is left to ask, so I proceed.",
            scores=scores,
            features=features,
        )
    return Decision(
        action="ask",
        policy=policy,
        ask_slots=tuple(name for q in questions for name in q.slots),
        questions=questions,
        scores=dict(scores or {}),
        rationale=rationale,
        probabilities=dict(probabilities or {}),
        features=features,
    )
