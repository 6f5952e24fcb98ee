"""A rate times a quantity: "weekly gross pay at full hours?", "what do 3 nights cost?" (pure
Python, no Django).

The rate is an amount the task states per unit of time ("Pay: £12.60/hour", "€95 a night");
the quantity is a number of that unit, the request's own ("for 3 nights") or the task's, per
the period asked ("24 h/week" for weekly pay). Both are quoted back with the product, said as
worked out, so nothing is a fact the task did not give; without both, no figure (the caller
answers another way).
"""

from __future__ import annotations

import re

from agents.policies.parse_money import find_money
from agents.policies.parse_numbers import digits_for_words
from agents.skills.amounts import amount as worked_out
from agents.skills.amounts import split_amount
from agents.skills.facts import TaskFacts
from agents.skills.notes import note_lines
from agents.skills.work import SkillAnswer
from agents.skills.write import finish, say_money

# The unit a rate is given per, by the words that say it.
_UNITS = {
    "hour": r"h|hr|hrs|hours?",
    "day": r"days?",
    "night": r"nights?",
    "week": r"weeks?|wk",
    "month": r"months?|mo",
}
_PER = r"\s*(?:/|per\s+|an?\s+|each\s+)"
_PERIOD = re.compile(
    r"(?i)\b(?:(?P<adj>weekly|monthly|daily|nightly)|(?:per|a|each|every)\s+(?P<per>week|month|"
    r"day|night)|(?:in\s+)?total)\b"
)
_ADJ = {"weekly": "week", "monthly": "month", "daily": "day", "nightly": "night"}


def _rate(lines: list[str]) -> tuple[str, str, str] | None:
    """(canonical amount, unit, the line) of the first amount stated per a unit of time."""
    for line in lines:
        for found in find_money(line):
            after = line[found.end : found.end + 16]
            for unit, words in _UNITS.items():
                if re.match(rf"(?i){_PER}(?:{words})\b", after):
                    return found.value, unit, line.strip()[:120]
    return None


def _quantity(request: str, lines: list[str], unit: str, period: str | None) -> tuple[float, str]:
    """(how many ``unit``, the words it was read from), the request's own first; 0 without."""
    words = _UNITS[unit]
    number = r"(?P<n>\d+(?:\.\d+)?)"
    own = re.search(rf"(?i)\b{number}\s*-?\s*(?:{words})\b", digits_for_words(request))
    if own is not None:
        return float(own["n"]), own[0]
    for line in lines:
        text = digits_for_words(line)
        if period is not None:  # "24 h/week", "24 hours a week"
            hit = re.search(rf"(?i)\b{number}\s*(?:{words}){_PER}(?:{_UNITS[period]})\b", text)
        else:
            hit = re.search(rf"(?i)\b{number}\s*-?\s*(?:{words})\b", text)
        if hit is not None:
            return float(hit["n"]), hit[0]
    return 0.0, ""


def rate_total(facts: TaskFacts, request: str) -> SkillAnswer | None:
    """The rate times the quantity, worked out and said as such; None without both."""
    lines = [facts.goal, *note_lines(facts.document), *facts.chat]
    rate = _rate(lines)
    if rate is None:
        return None
    amount, unit, rate_line = rate
    asked = _PERIOD.search(request)
    period = None
    if asked is not None and (asked["adj"] or asked["per"]):
        period = _ADJ.get((asked["adj"] or "").casefold()) or (asked["per"] or "").casefold()
    if period == unit:
        return None  # "the nightly rate?": the rate itself, not a product
    count, said = _quantity(request, lines, unit, period)
    if period is None and said and said not in request:
        return None  # "the budget in total?": no period and no quantity of the rate's unit
    rated = split_amount(amount)
    if rated is None or count <= 0:
        return None
    shown = worked_out(rated[0], rated[1] * count)
    how_many = f"{count:g} {unit}{'' if count == 1 else 's'}"
    per = f" a {period}" if period else ""
    text = (
        f"About {shown}{per}: {say_money(amount)} per {unit} (“{rate_line}”) times {how_many} "
        f"(“{said}”), worked out from the task."
    )
    return SkillAnswer("rate", finish(text, facts.prefs))
