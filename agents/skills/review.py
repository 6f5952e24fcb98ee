"""A reviewer's check of another agent's answer to a plan step (issue 30, ADR 0024), pure and
deterministic: the reviewer does the step itself with its skills and compares.

The answer passes when a skill covers the step (so the reviewer knows what the step needs),
the answer invents no value (every number, date and name is the task's own:
``grounding.unknown_values``), and it names every item of the task that the reviewer's own
answer to the step names: each open value (by its label) and each known value (as written).
Otherwise the verdict says what is missing or invented. A step no skill covers is not passed:
the reviewer cannot tell what it needs, so a person decides.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.skills.facts import TaskFacts
from agents.skills.grounding import unknown_values
from agents.skills.write import say

MAX_NAMED = 4


@dataclass(frozen=True)
class Verdict:
    passed: bool
    why: str
    missing: tuple[str, ...] = ()
    invented: tuple[str, ...] = ()
    skill: str = ""

    def to_dict(self, step: int) -> dict[str, Any]:
        return {
            "step": step,
            "passed": self.passed,
            "why": self.why,
            "missing": list(self.missing),
            "invented": list(self.invented),
            "skill": self.skill,
        }


def _items(text: str, facts: TaskFacts) -> list[tuple[str, tuple[str, ...]]]:
    """The task's items a text names: (how to call it, the forms that count as naming it)."""
    lowered = text.casefold()
    found: list[tuple[str, tuple[str, ...]]] = []
    for open_value in facts.open:
        forms = tuple(f for f in (open_value.label, open_value.slot.replace("_", " ")) if f)
        if any(f.casefold() in lowered for f in forms):
            found.append((f"the open {open_value.label}", forms))
    for value in facts.known:
        forms = tuple(f for f in (value.raw, say(value, facts.prefs).split(" (")[0]) if f)
        if any(f.casefold() in lowered for f in forms):
            found.append((forms[-1], forms))
    return found


def check_answer(*, skill: str, own_answer: str, answer: str, facts: TaskFacts) -> Verdict:
    """The verdict on ``answer`` (another agent's), given the reviewer's ``own_answer`` to the
    same step from ``skill`` ("" when no skill covers it)."""
    if not answer.strip():
        return Verdict(False, "there is no answer to check", skill=skill)
    if not skill:
        return Verdict(
            False, "none of my skills covers this step, so I cannot check it: a person decides"
        )
    invented = tuple(unknown_values(answer, facts))
    lowered = answer.casefold()
    missing = tuple(
        name
        for name, forms in _items(own_answer, facts)
        if not any(f.casefold() in lowered for f in forms)
    )
    if invented or missing:
        parts = []
        if missing:
            parts.append("missing " + ", ".join(missing[:MAX_NAMED]))
        if invented:
            parts.append("names what the task does not say: " + ", ".join(invented[:MAX_NAMED]))
        return Verdict(False, "; ".join(parts), missing, invented, skill)
    return Verdict(
        True,
        f"covers what the {skill} skill finds for this step and invents nothing",
        skill=skill,
    )


def answer_body(reply: str, plan_check: Mapping[str, Any] | None) -> str:
    """The answer to check: what the step's agent answered (its plan check keeps it, without
    the step's header and verdict lines), else its reply as posted."""
    if plan_check and isinstance(plan_check.get("answer"), str):
        return str(plan_check["answer"])
    return reply
