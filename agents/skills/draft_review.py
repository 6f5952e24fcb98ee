"""A reviewer's check of another agent's draft (issue 30), pure and deterministic: the draft
(the writer's suggestion while nobody has accepted it, else the document) against the task's
known values, its open values and the kind's checklist.

What the draft lacks is said in the reply and proposed as a suggestion: a section that adds
the values it does not state, the questions it does not raise and the checklist steps it does
not cover, which a person accepts or rejects (a reviewer never edits the document itself). The
open values the draft marks "to decide" are asked about in the reply: no reviewer can fill them
in. A draft that lacks nothing gets no suggestion.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.skills.answers import checklist_items
from agents.skills.facts import TaskFacts, Value
from agents.skills.quote import content_words
from agents.skills.work import (
    TEXT_MAX,
    SkillAnswer,
    Suggestion,
    _heading,
    _question,
    labelled,
    open_items,
)
from agents.skills.write import PLACEHOLDER, and_list, finish, say

HEADING = "Review: what the draft still needs"
MAX_ITEMS = 6  # of each kind, in the suggestion
COVERED = 0.6  # the share of a checklist step's content words the draft must have


@dataclass(frozen=True)
class DraftReview:
    """What a draft lacks: known values it does not state, open values it does not mention,
    open values it leaves to decide, and checklist steps it does not cover."""

    unstated: tuple[Value, ...]
    unasked: tuple[str, ...]  # the open values' questions, as the suggestion adds them
    to_decide: tuple[str, ...]  # the open values' questions the draft marks "to decide"
    steps: tuple[str, ...]

    @property
    def lacks(self) -> bool:
        return bool(self.unstated or self.unasked or self.steps)


def _states(value: Value, text: str, facts: TaskFacts) -> bool:
    forms = (value.raw, say(value, facts.prefs).split(" (")[0])
    return any(f and f.casefold() in text for f in forms)


def _covers(step: str, words: set[str]) -> bool:
    wanted = content_words(step.replace(PLACEHOLDER, " "))
    return not wanted or len(wanted & words) >= COVERED * len(wanted)


def check_draft(draft: str, facts: TaskFacts) -> DraftReview:
    text = draft.casefold()
    words = content_words(draft)
    unstated = tuple(v for v in facts.known if not v.assumed and not _states(v, text, facts))
    unasked: list[str] = []
    to_decide: list[str] = []
    for item in open_items(facts):
        if not (item.required or item.readings):
            continue
        named = any(f and f.casefold() in text for f in (item.label, item.slot.replace("_", " ")))
        (to_decide if named else unasked).append(_question(item, facts))
    steps = tuple(s for s in checklist_items(facts) if not _covers(s, words))
    return DraftReview(unstated, tuple(unasked), tuple(to_decide), steps)


def _section(found: DraftReview, facts: TaskFacts) -> str:
    lines = [f"- {labelled(v, facts)}" for v in found.unstated[:MAX_ITEMS]]
    lines += [f"- To decide: {q}" for q in found.unasked[:MAX_ITEMS]]
    lines += [f"- [ ] {s}" for s in found.steps[:MAX_ITEMS]]
    text = _heading(HEADING, facts) + "\n" + "\n".join(lines)
    return finish(text[: TEXT_MAX - 4].rstrip(), facts.prefs)


def review_draft(
    draft: str, facts: TaskFacts, *, author: str = "", pending: bool = False
) -> SkillAnswer:
    """The reviewer's reply on ``draft`` and, when it lacks something, the suggestion that
    appends what it lacks. ``author``: whose draft (named without an @: no hop goes back);
    ``pending``: the draft is a suggestion nobody has accepted yet."""
    whose = f"{author}'s draft" if author else "the draft"
    where = " (its suggestion, not accepted yet)" if pending else ""
    if not draft.strip():
        return SkillAnswer("review", f"There is no draft to check yet: ask for one first{where}.")
    found = check_draft(draft, facts)
    said = [f"I checked {whose}{where} against what the task says and its checklist."]
    if found.unstated:
        said.append(
            "It does not state "
            + and_list([labelled(v, facts) for v in found.unstated[:MAX_ITEMS]])
            + "."
        )
    if found.steps:
        said.append(
            f"It has no step for {and_list([s for s in found.steps[:3]])}"
            + (f" and {len(found.steps) - 3} more" if len(found.steps) > 3 else "")
            + "."
        )
    questions = [*found.unasked, *found.to_decide][:4]
    if questions:
        said.append("Still to decide: " + " ".join(questions))
    if not found.lacks:
        said.append("It lacks nothing I can check; nothing to add.")
        return SkillAnswer("review", finish(" ".join(said), facts.prefs))
    said.append("My suggestion adds what is missing: accept or reject it.")
    # appended after the draft, whether it is in the document already or accepted later
    suggestion = Suggestion(find="", replace="\n\n" + _section(found, facts))
    return SkillAnswer("review", finish(" ".join(said), facts.prefs), suggestion)
