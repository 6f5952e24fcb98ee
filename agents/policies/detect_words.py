"""The words the slot detectors know: month and weekday names, number words, currency names,
capitalised words that are never names, and the regular-expression pieces built from them.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

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
