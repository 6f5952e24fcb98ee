"""What the skills know about a task: its values as people write them, what is still open,
its parts, the people and the person's preferences (pure Python, no Django).

``TaskFacts`` is built once per request (``understand.py`` builds it from a turn's context) and
every skill reads it; nothing here invents a value: each ``Value`` keeps the source it came from
("the goal", "your message", "the chat", "the document", "your memory"), and a value the
understanding inferred (a weekday turned into a date) is ``assumed`` and said as such.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date

from agents.policies.style import MONTH_NAMES
from agents.policies.templates import TaskTemplate

# The month names the style pass writes dates with: one list for both.
MONTHS = MONTH_NAMES
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True)
class Value:
    """One known value: the slot it fills (or "" for a value of a free-form task), how people
    call it, its canonical reading and the words it is shown in."""

    label: str  # "date", "budget", "attendees"
    raw: str  # canonical: "2027-06-12", "GBP 2000", "5", "Ana, Ben"
    type: str  # a slot type: date, number, money, place, person, choice, text
    source: str  # "request", "chat", "document", "memory"
    slot: str = ""
    assumed: bool = False  # inferred (a weekday or "next week" turned into a date)
    evidence: str = ""  # the words it was read from, when known ("Friday")
    unit: str = ""  # a number's unit ("minutes", "people")


@dataclass(frozen=True)
class OpenValue:
    """A value the work needs that nobody gave (or gave twice, differently)."""

    slot: str
    label: str
    question: str
    choices: tuple[str, ...] = ()
    weight: float = 1.0
    required: bool = True
    readings: tuple[str, ...] = ()  # the values said, when they disagree

    @property
    def blocks(self) -> float:
        """How much it blocks the work: required and heavy first, a contested value above an
        unanswered one of the same weight."""
        return self.weight * (1.0 if self.required else 0.4) + (0.3 if self.readings else 0.0)


@dataclass(frozen=True)
class TaskFacts:
    title: str
    goal: str
    today: date
    request: str = ""
    document: str = ""
    kind: TaskTemplate | None = None
    known: tuple[Value, ...] = ()
    open: tuple[OpenValue, ...] = ()
    parts: tuple[str, ...] = ()  # the goal's own clauses (the generic kind's sections)
    people: tuple[str, ...] = ()  # people the task names (not the chat's authors)
    prefs: Mapping[str, str] = field(default_factory=dict)
    stated: str = ""  # every text the values may come from, for the grounding checks
    chat: tuple[str, ...] = ()  # the people's chat messages, oldest first (quoted answers)

    def value(self, slot: str) -> Value | None:
        return next((v for v in self.known if v.slot == slot), None)

    def of_type(self, *types: str) -> tuple[Value, ...]:
        return tuple(v for v in self.known if v.type in types)

    @property
    def deadline(self) -> Value | None:
        """The date the work is due or happens on: the kind's first date slot that is known,
        else the first date the task states."""
        dates = self.of_type("date")
        return dates[0] if dates else None

    @property
    def assumptions(self) -> tuple[Value, ...]:
        return tuple(v for v in self.known if v.assumed)

    @property
    def subject(self) -> str:
        """What the task is, in the person's words: the title, else the goal's first clause."""
        return self.title.strip() or (self.parts[0] if self.parts else self.goal.strip())
