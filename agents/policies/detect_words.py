"""The words the slot detectors know: month and weekday names, number words, currency names,
capitalised words that are never names, and the regular-expression pieces built from them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from agents.policies.base import SlotSpec

MONTHS = {
    "january": 1,
    "february": 2,
    "march": 3,
    "april": 4,
    "may": 5,
    "june": 6,
    "july": 7,
    "august": 8,
    "september": 9,
    "october": 10,
    "november": 11,
    "december": 12,
    "jan": 1,
    "feb": 2,
    "mar": 3,
    "apr": 4,
    "jun": 6,
    "jul": 7,
    "aug": 8,
    "sep": 9,
    "sept": 9,
    "oct": 10,
    "nov": 11,
    "dec": 12,
}
WEEKDAYS = {
    "monday": 0,
    "tuesday": 1,
    "wednesday": 2,
    "thursday": 3,
    "friday": 4,
    "saturday": 5,
    "sunday": 6,
}

# Capitalised words that start sentences or name times, never places or people.
NOT_NAMES = {
    "i",
    "the",
    "a",
    "an",
    "we",
    "my",
    "our",
    "please",
    "today",
    "tomorrow",
    "next",
    "this",
    *MONTHS,
    *WEEKDAYS,
}


def words(term: str) -> str:
    return r"\s+".join(re.escape(part) for part in term.split())


def term_re(terms: Sequence[str]) -> str:
    return _term_re_cached(tuple(terms))


@lru_cache(maxsize=1024)
def _term_re_cached(terms: tuple[str, ...]) -> str:
    ordered = sorted({t.casefold() for t in terms if t}, key=len, reverse=True)
    return "|".join(words(t) for t in ordered)


# "Van: Hire-A-Van, £145", "the van costs £145": the value belongs to the thing named there, so
# it never fills an open slot by its order alone (the budget is not the van's price).
_LINE_LABEL = re.compile(r"(?m)^[ \t]*(?:[-*+][ \t]+)?(?:\*\*)?[A-Za-z][\w '/&-]{0,30}(?:\*\*)?:")
_PRICE_OF = re.compile(
    r"\b(?:costs|costing|priced|price|fee|fees|charges|quoted?)\b\W*(?:\w+\W+)?$"
)


def owned_elsewhere(text: str, start: int, spec: SlotSpec) -> bool:
    """Whether the value at ``text[start]`` belongs to something named on its line other
    than ``spec``'s slot (its label, or "X costs")."""
    line_start = text.rfind("\n", 0, start) + 1
    before = text[line_start:start].casefold()
    terms = [spec.name.replace("_", " "), spec.label, *spec.aliases]
    if any(re.search(rf"(?<!\w){words(t.casefold())}(?!\w)", before) for t in terms if t):
        return False  # "Budget for work trips: $2,500": the slot itself is named on the line
    label = _LINE_LABEL.match(text, line_start)
    if label and label.end() <= start:
        return True
    return bool(_PRICE_OF.search(before[-30:]))
