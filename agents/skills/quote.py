"""Answers a question about the task with the task's own words: the line of the goal, document
or chat that says it, quoted with where it came from (pure Python, no Django).

"What time is the skip collected?" is answered by the chat line "skip gets collected at 12:30",
not by a guess: the skills know the task's typed values (dates, money, people), but much of what
people ask sits in a line nobody filled into a slot. Nothing is inferred: the answer is the
quote; a question nothing in the task answers is not answered from it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from agents.skills.facts import TaskFacts

_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_STEM = 5
# Words of a question that say what kind of answer is wanted, not what it is about.
_STOP = frozenset(
    """
    a about again all also am an and any anyone anything are as at be been being but by can
    could did do does doing for from get got had has have how i if in into is it its just know
    let me much many my no not now of on or our out please really so some still tell than that
    the their them then there these they this those to too us was we well were what whats when
    where which who whom whose why will with would yet you your time long assistant task
    document doc chat goal say says said again right exactly per each via off
    """.split()  # noqa: SIM905 (a word list reads better as text)
)
_QUESTION = re.compile(
    r"(?i)^\s*(?:what|when|who|whom|whose|where|which|why|how|is|are|was|were|do|does|did|can|"
    r"could|will|would|should|have|has|any)\b|\?\s*$"
)


@dataclass(frozen=True)
class Passage:
    origin: str  # "the goal", "the document", "the chat"
    text: str
    overlap: int  # content words it shares with the question


# Questions asking for advice or an opinion: what the task says does not answer them.
_ADVICE = re.compile(
    r"(?i)\b(?:should|shall|good idea|idea|ideas|recommend|suggest|advice|think|opinion|"
    r"better|best|worth|could we|would it|what if|how do (?:i|we)|how to|thoughts)\b"
)


def is_question(request: str) -> bool:
    """A question about what the task says ("what time is the skip collected?"), not a
    request for advice or an opinion ("should we rent bikes?", "is the tour a good idea?")."""
    text = request.strip()
    return bool(_QUESTION.search(text)) and not _ADVICE.search(text)


def content_words(text: str) -> set[str]:
    """The words of ``text`` that say what it is about, by their first letters."""
    return _content(text)


def unanswered_words(question: str, answer: str) -> set[str]:
    """The question's content words the answer does not contain ("laptop" in "what's the budget
    per laptop?" answered "a budget of 14,000 EUR")."""
    return _content(question) - _content(answer) - {"budge", "date", "peopl", "place", "venue"}


def _content(text: str) -> set[str]:
    words = (w.casefold() for w in _WORD.findall(text))
    return {w[:_STEM] for w in words if (len(w) > 2 or w.isdigit()) and w not in _STOP}


def lines_of(goal: str, document: str, chat: Iterable[str]) -> list[tuple[str, str]]:
    """The task's lines a quote may come from, with where each is: the goal, each line of the
    document (under its heading), each chat message."""
    out = [("the goal", goal)] if goal.strip() else []
    heading = ""
    for raw in document.splitlines():
        line = re.sub(r"^\s*(?:[-*+]|\d+[.)]|\[[ xX]\])\s*", "", raw).strip().strip("*_")
        if not line:
            continue
        if raw.lstrip().startswith("#"):
            heading = line.lstrip("#").strip()
            continue
        out.append(("the document", f"{heading}: {line}" if heading else line))
    out += [("the chat", message) for message in chat if message.strip()]
    return out


# A question no typed value answers is answered from the task's lines only when one shares at
# least this many content words with it ("what time is the skip collected?": skip, collected);
# one word in common ("a hotel in Alfama") is a topic, not an answer.
ANSWERS_AT = 2


def passages(
    facts: TaskFacts, question: str, *, limit: int = 2, at_least: int = 1
) -> list[Passage]:
    """The lines of the task that share most content words with ``question``, best first."""
    return passages_in(
        lines_of(facts.goal, facts.document, facts.chat), question, limit=limit, at_least=at_least
    )


def passages_in(
    lines: Iterable[tuple[str, str]], question: str, *, limit: int = 2, at_least: int = 1
) -> list[Passage]:
    """``passages`` over (origin, text) lines: those sharing at least ``at_least`` content
    words with ``question`` (one of four letters or more), the best ones first."""
    wanted = _content(question)
    found: list[Passage] = []
    for origin, text in lines:
        common = wanted & _content(text)
        if len(common) >= at_least and any(len(w) >= 4 or w.isdigit() for w in common):
            found.append(Passage(origin, " ".join(text.split()), len(common)))
    found.sort(key=lambda p: (-p.overlap, len(p.text)))
    if not found:
        return []
    best = found[0].overlap
    return [p for p in found if p.overlap == best][:limit]


# A question that asks for a kind of value ("how many staff", "how long we have the van
# for", "what does a hotel in Alfama cost?") is answered by a line with one content word in
# common when that line holds a value of the kind asked: "Trial: Feb-Apr 2025, 9 staff",
# "Van: Hire-A-Van, booked 08:00-14:00". A line on the topic holding no such value is no answer.
_NUMBER = (  # a count: digits that are not part of a time or a decimal, or a number word
    r"(?<![\d:.])\d+(?![\d:.]?\d)(?!:)|"
    r"\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty|dozen)\b"
)
_TIME = (
    r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b|\b\d+\s*(?:hours?|hrs?|h|days?|nights?|"
    r"weeks?|months?|minutes?|mins?)\b|\b(?:noon|midnight)\b"
)
_MONEY = r"[£$€¥]\s?\d|\d\s?(?:[£$€]|\b(?:[A-Z]{3}|euros?|pounds?|dollars?)\b)"
_ASKED_KINDS = (
    (re.compile(r"\b(?:cost|costs|price|prices|fee|fees|how much|pay|paid|rent)\b"), _MONEY),
    (re.compile(r"\bhow (?:long|late|early)\b|\bwhat time\b|\buntil when\b"), _TIME),
    (re.compile(r"\bhow many\b|\bnumber of\b|\bhow big\b"), _NUMBER),
)


def answering(lines: Iterable[tuple[str, str]], question: str) -> list[Passage]:
    """The lines that answer ``question``: those sharing ``ANSWERS_AT`` content words with it,
    else, for a question asking for a kind of value, those sharing one that hold such a value."""
    lines = list(lines)
    found = passages_in(lines, question, at_least=ANSWERS_AT)
    if found:
        return found
    asked = question.casefold()
    kinds = [value for ask, value in _ASKED_KINDS if ask.search(asked)]
    if not kinds:
        return []
    holding = [
        (origin, text)
        for origin, text in lines
        if any(
            re.search(value, text, flags=0 if value is _MONEY else re.IGNORECASE) for value in kinds
        )
    ]
    wanted = _content(question)
    found = [
        Passage(origin, " ".join(text.split()), len(wanted & _content(text)))
        for origin, text in holding
        if wanted & _content(text)
    ]
    found.sort(key=lambda p: (-p.overlap, len(p.text)))
    return found[:2]


def quoted(found: list[Passage]) -> str:
    """'The chat says: “…”.' for each passage."""
    parts = []
    for p in found:
        text = p.text if len(p.text) <= 240 else p.text[:237].rstrip() + "…"
        parts.append(f"{p.origin[:1].upper()}{p.origin[1:]} says: “{text}”.")
    return " ".join(parts)
