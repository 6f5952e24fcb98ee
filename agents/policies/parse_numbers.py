"""Numbers in running text, read with well-kept parsers instead of hand-written grammars.

- numbers written as words: ``number-parser`` ("two hundred and fifty" -> 250);
- durations ("90 minutes", "an hour and a half") and counts with their unit ("12 people").

`Found`, the value every parser here and in parse_money, parse_dates and places returns, lives
here. Pure Python, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import cache

from number_parser import parse_number
from number_parser.data import en


@dataclass(frozen=True)
class Found:
    """A value found in a text: canonical value, how sure the reading is, and where it was."""

    value: str
    confidence: float
    start: int
    end: int
    text: str


# --- numbers written as words -----------------------------------------------------------------


@cache
def _number_word_re() -> re.Pattern[str]:
    info = en.info
    # "zero" stays a word ("zero-downtime", "zero waste").
    first = [
        w for w in (*info["UNIT_NUMBERS"], *info["DIRECT_NUMBERS"], *info["TENS"]) if w != "zero"
    ]
    words = [*first, *list(info["BIG_POWERS_OF_TEN"])[:3]]
    start = "|".join(sorted(first, key=len, reverse=True))
    word = "|".join(sorted(words, key=len, reverse=True))
    # A run of number words that starts with a number ("two hundred and fifty", "twenty-five",
    # "fifteen"); "million" alone (after digits: "1.5 million") is left to the money reader.
    return re.compile(rf"\b(?:{start})(?:(?:\s+and\s+|\s*-\s*|\s+)(?:{word}))*\b", re.IGNORECASE)


_EXTRA_WORDS = {"a dozen": 12, "dozen": 12, "a couple of": 2, "a couple": 2, "half a dozen": 6}


def number_of(words: str) -> float | None:
    """A number written in digits or words ("1,500", "twelve", "twenty-five"), else None."""
    token = words.strip().casefold()
    if token in _EXTRA_WORDS:
        return float(_EXTRA_WORDS[token])
    cleaned = token.replace(",", "").replace("\u202f", "").replace("'", "")
    if re.fullmatch(r"\d+\.\d{3}", token):  # "1.500" written the European way
        cleaned = token.replace(".", "")
    try:
        return float(cleaned)
    except ValueError:
        pass
    value = parse_number(token)
    return None if value is None else float(value)


def digits_for_words(text: str) -> str:
    """The text with every run of cardinal number words written in digits ("twelve people" ->
    "12 people", "a two-day training" -> "a 2-day training"). Ordinals are left alone."""

    def replace(match: re.Match[str]) -> str:
        value = parse_number(match[0])
        return match[0] if value is None else str(value)

    text = re.sub(r"\bhalf a dozen\b", "6", text, flags=re.IGNORECASE)
    text = re.sub(r"\ba dozen\b", "12", text, flags=re.IGNORECASE)
    return _number_word_re().sub(replace, text)


def format_number(value: float | Decimal) -> str:
    number = float(value)
    return str(int(number)) if number == int(number) else f"{number:.2f}".rstrip("0")


# --- durations ---------------------------------------------------------------------------------

_UNITS = {
    "minute": ("minutes", 1),
    "min": ("minutes", 1),
    "hour": ("minutes", 60),
    "hr": ("minutes", 60),
    "h": ("minutes", 60),
    "day": ("days", 1),
    "night": ("nights", 1),
    "week": ("days", 7),
    "month": ("months", 1),
}
_DURATION = re.compile(
    r"(?<!\bin )(?<!\bwithin )"
    r"\b(?P<n>\d+(?:[.,]\d+)?|half\s+an?|an?|one\s+and\s+a\s+half)\s*-?\s*"
    r"(?:(?!(?:minutes?|mins?|hours?|hrs?|days?|nights?|weeks?|months?)\b)[a-z]+(?:-[a-z]+)*\s+)?"
    r"(?P<unit>minutes?|mins?|hours?|hrs?|h|days?|nights?|weeks?|months?)\b",
    re.IGNORECASE,
)


def find_durations(text: str) -> list[Found]:
    """Durations: "90 minutes", "an hour and a half", "two days", "45-minute", "a week". Values
    read "90 minutes", "2 days", "3 nights"."""
    text = digits_for_words(text)
    found = []
    for m in _DURATION.finditer(text):
        raw = m["n"].casefold()
        if raw.startswith("half"):
            n = 0.5
        elif raw.startswith("one and"):
            n = 1.5
        elif raw in ("a", "an"):
            n = 1.0
        else:
            n = float(raw.replace(",", "."))
        unit = m["unit"].casefold().rstrip("s")
        unit = "min" if unit in ("min",) else unit
        name, factor = _UNITS.get(unit, _UNITS.get(unit[:3], ("", 0)))
        if not name:
            continue
        value = n * factor
        tail = text[m.end() : m.end() + 16]
        if name == "minutes" and re.match(r"\s+and\s+a\s+half", tail, re.I):
            value += 30
        found.append(Found(f"{format_number(value)} {name}", 0.85, m.start(), m.end(), m[0]))
    return found


def duration_in(value: str, unit: str) -> str | None:
    """A duration value ("90 minutes", "2 days") in `unit` ("minutes", "days", "nights")."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?) (minutes|days|nights|months)", value)
    if m is None:
        return None
    n, have = float(m[1]), m[2]
    if have == unit or {have, unit} <= {"days", "nights"}:
        return format_number(n)
    return None


# --- counts ------------------------------------------------------------------------------------


def find_counts(text: str, units: Sequence[str]) -> list[Found]:
    """Numbers followed by one of `units` ("12 people", "twelve people", "4 adults", "a party
    of six"); number words are read by number-parser."""
    if not units:
        return []
    converted = digits_for_words(text)
    unit_re = "|".join(
        r"\s+".join(re.escape(p) for p in u.split())
        for u in sorted({u.casefold() for u in units}, key=len, reverse=True)
    )
    found = []
    for m in re.finditer(
        rf"\b(?P<n>\d+(?:\.\d+)?)(?:\s*-\s*|\s+)(?:[^\W\d_]+\s+){{0,2}}?(?P<unit>{unit_re})\b",
        converted,
        re.IGNORECASE,
    ):
        found.append(Found(format_number(float(m["n"])), 0.9, m.start(), m.end(), m[0]))
    for m in re.finditer(
        r"\b(?:a\s+)?(?:party|group|team)\s+of\s+(?P<n>\d+)\b", converted, re.IGNORECASE
    ):
        found.append(Found(m["n"], 0.85, m.start(), m.end(), m[0]))
    found.sort(key=lambda f: f.start)
    return found
