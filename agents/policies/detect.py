"""Typed slot detectors: dates, money, numbers with units, choices (with aliases), places,
people and labelled free text, in English text. Standard-library regular expressions only.

Each detector is deliberately conservative: it returns a value only when the text states it, with
a confidence that says how explicit the statement was. What the detectors miss, the model's
structured extraction (signals.SlotExtraction) can add; see situation.build_situation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
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
NUMBER_WORDS = {
    "a": 1,
    "an": 1,
    "one": 1,
    "two": 2,
    "three": 3,
    "four": 4,
    "five": 5,
    "six": 6,
    "seven": 7,
    "eight": 8,
    "nine": 9,
    "ten": 10,
    "eleven": 11,
    "twelve": 12,
    "fifteen": 15,
    "twenty": 20,
    "thirty": 30,
    "forty": 40,
    "fifty": 50,
    "sixty": 60,
    "ninety": 90,
    "hundred": 100,
    "couple of": 2,
    "a couple of": 2,
    "a few": 3,
}
CURRENCIES = {
    "€": "EUR",
    "eur": "EUR",
    "euro": "EUR",
    "euros": "EUR",
    "$": "USD",
    "usd": "USD",
    "dollar": "USD",
    "dollars": "USD",
    "£": "GBP",
    "gbp": "GBP",
    "pound": "GBP",
    "pounds": "GBP",
    "¥": "JPY",
    "jpy": "JPY",
    "yen": "JPY",
    "chf": "CHF",
    "francs": "CHF",
}

# Capitalised words that start sentences or name times, never places or people.
_NOT_NAMES = {
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

_MONTH_RE = (
    r"(?P<month>january|february|march|april|may|june|july|august|september|october|november"
    r"|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
)
_MONTH_RE2 = _MONTH_RE.replace("?P<month>", "?P<month2>")
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_DAY2 = _DAY.replace("?P<day>", "?P<day2>")
_YEAR = r"(?:,?\s+(?P<year>\d{4}))?"
_NUM = r"\d+(?:[.,]\d+)*"
_NUMBER_WORD_RE = "|".join(sorted((re.escape(w) for w in NUMBER_WORDS), key=len, reverse=True))


@dataclass(frozen=True)
class Detection:
    """A slot value found in a text: the value, how sure we are, and where it was."""

    slot: str
    value: str
    confidence: float
    start: int
    evidence: str


@dataclass(frozen=True)
class _Found:
    value: str
    confidence: float
    start: int
    end: int
    text: str


def _words(term: str) -> str:
    return r"\s+".join(re.escape(part) for part in term.split())


def _term_re(terms: Sequence[str]) -> str:
    return _term_re_cached(tuple(terms))


@lru_cache(maxsize=1024)
def _term_re_cached(terms: tuple[str, ...]) -> str:
    ordered = sorted({t.casefold() for t in terms if t}, key=len, reverse=True)
    return "|".join(_words(t) for t in ordered)


# --- dates ---------------------------------------------------------------------------------


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _infer_year(month: int, day: int, today: date) -> date | None:
    candidate = _safe_date(today.year, month, day)
    if candidate is not None and candidate < today:
        candidate = _safe_date(today.year + 1, month, day)
    return candidate


def find_dates(text: str, *, today: date) -> list[_Found]:
    """Every date the text states, in order, as ISO dates (YYYY-MM-DD, or YYYY-MM for a month)."""
    found: list[_Found] = []
    taken: list[tuple[int, int]] = []

    def add(start: int, end: int, value: date | str | None, confidence: float) -> None:
        if value is None or any(s < end and start < e for s, e in taken):
            return
        taken.append((start, end))
        iso = value if isinstance(value, str) else value.isoformat()
        found.append(_Found(iso, confidence, start, end, text[start:end]))

    flags = re.IGNORECASE
    # Ranges first: "4-9 May", "May 4-9", "4 May - 9 June".
    for m in re.finditer(
        rf"\b{_DAY}\s*(?:-|\u2013|to|until)\s*{_DAY2}\s+(?:of\s+)?{_MONTH_RE}{_YEAR}\b", text, flags
    ):
        month, year = MONTHS[m["month"].casefold()], m["year"]
        for key in ("day", "day2"):
            d = int(m[key])
            value = _safe_date(int(year), month, d) if year else _infer_year(month, d, today)
            add(m.start(key), m.end(key) if key == "day" else m.end(), value, 0.9)
    for m in re.finditer(
        rf"\b{_MONTH_RE}\s+{_DAY}\s*(?:-|\u2013|to|until)\s*{_DAY2}{_YEAR}\b", text, flags
    ):
        month, year = MONTHS[m["month"].casefold()], m["year"]
        for key in ("day", "day2"):
            d = int(m[key])
            value = _safe_date(int(year), month, d) if year else _infer_year(month, d, today)
            add(m.start() if key == "day" else m.start(key), m.end(key), value, 0.9)
    for m in re.finditer(r"\b(?P<y>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})\b", text):
        add(m.start(), m.end(), _safe_date(int(m["y"]), int(m["m"]), int(m["d"])), 0.95)
    for pattern in (
        rf"\b{_DAY}\s+(?:of\s+)?{_MONTH_RE}{_YEAR}\b",
        rf"\b{_MONTH_RE}\s+{_DAY}{_YEAR}\b",
    ):
        for m in re.finditer(pattern, text, flags):
            if m["month"].casefold() == "may" and not m["month"][0].isupper() and not m["year"]:
                continue  # "you may 2 ..." is not a date
            month, d = MONTHS[m["month"].casefold()], int(m["day"])
            year = m["year"]
            value = _safe_date(int(year), month, d) if year else _infer_year(month, d, today)
            add(m.start(), m.end(), value, 0.9)
    relative = {
        "day after tomorrow": today + timedelta(days=2),
        "today": today,
        "tonight": today,
        "tomorrow": today + timedelta(days=1),
    }
    for word, value in relative.items():
        for m in re.finditer(rf"\b{_words(word)}\b", text, flags):
            add(m.start(), m.end(), value, 0.85)
    for m in re.finditer(
        rf"\b(?:(?P<next>next|this|coming)\s+)?(?P<wd>{'|'.join(WEEKDAYS)})\b", text, flags
    ):
        ahead = (WEEKDAYS[m["wd"].casefold()] - today.weekday()) % 7 or 7
        add(m.start(), m.end(), today + timedelta(days=ahead), 0.75 if m["next"] else 0.7)
    for m in re.finditer(r"\bnext\s+week\b", text, flags):
        add(m.start(), m.end(), today + timedelta(days=7 - today.weekday()), 0.6)
    for m in re.finditer(
        rf"\bin\s+(?P<n>\d+|{_NUMBER_WORD_RE})\s+(?P<unit>days?|weeks?|months?)\b", text, flags
    ):
        n = _number(m["n"])
        if n is None:
            continue
        unit = m["unit"].casefold()
        days = n * (30 if unit.startswith("month") else 7 if unit.startswith("week") else 1)
        add(m.start(), m.end(), today + timedelta(days=int(days)), 0.7)
    for m in re.finditer(
        rf"\b(?:in|during|for)\s+{_MONTH_RE}(?:\s+(?P<year>\d{{4}}))?\b", text, flags
    ):
        if m["month"].casefold() == "may" and not m["month"][0].isupper():
            continue
        month = MONTHS[m["month"].casefold()]
        year = int(m["year"]) if m["year"] else today.year + (month < today.month)
        add(m.start(), m.end(), f"{year:04d}-{month:02d}", 0.5)
    found.sort(key=lambda f: f.start)
    return found


def parse_date(text: str, *, today: date) -> str | None:
    dates = find_dates(text, today=today)
    return dates[0].value if dates else None


# --- numbers and money ---------------------------------------------------------------------


def _number(token: str) -> float | None:
    token = token.strip().casefold()
    if token in NUMBER_WORDS:
        return float(NUMBER_WORDS[token])
    cleaned = token.replace(",", "")
    if re.fullmatch(r"\d+\.\d{3}", token):  # "1.500" written the European way
        cleaned = token.replace(".", "")
    try:
        return float(cleaned)
    except ValueError:
        return None


def _format_number(value: float) -> str:
    return str(int(value)) if value == int(value) else f"{value:.2f}".rstrip("0")


_SYMBOLS = "|".join(sorted((re.escape(c) for c in CURRENCIES), key=len, reverse=True))
_MONEY_PATTERNS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"(?P<cur>[€$£¥])\s?(?P<n>{_NUM})\s*(?P<k>k\b|thousand\b)?",
        rf"\b(?P<n>{_NUM})\s*(?P<k>k|thousand)?\s*(?P<cur>{_SYMBOLS})(?!\w)",
        rf"\b(?P<cur>eur|usd|gbp|chf|jpy)\s?(?P<n>{_NUM})\s*(?P<k>k\b|thousand\b)?",
    )
)


def find_money(text: str) -> list[_Found]:
    """Amounts with a currency: "€1,500", "1500 EUR", "$2k", "3 thousand pounds"."""
    found: list[_Found] = []
    taken: list[tuple[int, int]] = []
    for pattern in _MONEY_PATTERNS:
        for m in pattern.finditer(text):
            if any(s < m.end() and m.start() < e for s, e in taken):
                continue
            amount = _number(m["n"])
            if amount is None:
                continue
            if m["k"]:
                amount *= 1000
            currency = CURRENCIES[m["cur"].casefold()]
            taken.append((m.start(), m.end()))
            found.append(
                _Found(f"{currency} {_format_number(amount)}", 0.9, m.start(), m.end(), m[0])
            )
    found.sort(key=lambda f: f.start)
    return found


def parse_money(text: str) -> str | None:
    money = find_money(text)
    if money:
        return money[0].value
    m = re.search(rf"{_NUM}\s*k?\b", text, re.IGNORECASE)
    if m is None:
        return None
    amount = _number(m[0].rstrip("kK ").strip())
    if amount is None:
        return None
    return _format_number(amount * (1000 if m[0].strip().lower().endswith("k") else 1))


def find_quantities(text: str, units: Sequence[str]) -> list[_Found]:
    """Numbers followed by one of `units`: "4 adults", "two people", "45-minute", "a week"."""
    if not units:
        return []
    found: list[_Found] = []
    unit_re = _term_re(units)
    for m in re.finditer(
        rf"\b(?P<n>\d+(?:\.\d+)?|{_NUMBER_WORD_RE})(?:\s*-\s*|\s+)(?:[a-z]+\s+)?(?P<unit>{unit_re})\b",
        text,
        re.IGNORECASE,
    ):
        n = _number(m["n"])
        if n is not None:
            found.append(_Found(_format_number(n), 0.9, m.start(), m.end(), m[0]))
    if any(u.casefold() in ("days", "nights", "day", "night") for u in units):
        for m in re.finditer(
            rf"(?<!in )\b(?P<n>\d+|{_NUMBER_WORD_RE})\s+(?:[a-z-]+\s+)?weeks?\b",
            text,
            re.IGNORECASE,
        ):
            n = _number(m["n"])
            if n is not None:
                found.append(_Found(_format_number(n * 7), 0.75, m.start(), m.end(), m[0]))
        for m in re.finditer(r"\b(?:a\s+)?(?:long\s+)?weekend\b", text, re.IGNORECASE):
            found.append(_Found("2", 0.5, m.start(), m.end(), m[0]))
    found.sort(key=lambda f: f.start)
    return found


def parse_number(text: str) -> str | None:
    m = re.search(rf"\b(\d+(?:\.\d+)?|{_NUMBER_WORD_RE})\b", text, re.IGNORECASE)
    if m is None:
        return None
    n = _number(m[1])
    return None if n is None else _format_number(n)


# --- choices, names, free text --------------------------------------------------------------


# "not too busy", "nothing formal", "no jargon", "don't want a packed day": the choice is refused.
_NEGATED = re.compile(
    r"(?:\b(?:not|no|nothing|never|avoid|without|hate)|n't)(?:\s+\w+){0,2}\s+$", re.IGNORECASE
)


def find_choices(text: str, spec: SlotSpec) -> list[_Found]:
    """Mentions of the slot's choices or their aliases, as the canonical choice."""
    found: list[_Found] = []
    for choice in spec.choices:
        terms = [choice, *spec.choice_aliases.get(choice, ())]
        for m in re.finditer(rf"(?<!\w)(?:{_term_re(terms)})(?!\w)", text, re.IGNORECASE):
            if not _NEGATED.search(text[max(0, m.start() - 24) : m.start()]):
                found.append(_Found(choice, 0.85, m.start(), m.end(), m[0]))
    found.sort(key=lambda f: f.start)
    return found


def parse_choice(text: str, spec: SlotSpec) -> str | None:
    choices = {f.value for f in find_choices(text, spec)}
    return choices.pop() if len(choices) == 1 else None


_NAME_WORD = r"[A-Z][\w'\u2019-]*"
_PLACE = rf"{_NAME_WORD}(?:\s+{_NAME_WORD}|\s+(?:de|da|del|do|of|la|le|upon)\s+{_NAME_WORD})*"


def _is_name(candidate: str) -> bool:
    words = candidate.split()
    return bool(words) and words[0].casefold() not in _NOT_NAMES


def _trim_name(candidate: str) -> str:
    """Drop trailing capitalised words that are times, not names ("Ana Tomorrow" -> "Ana")."""
    words = candidate.split()
    while words and words[-1].casefold() in _NOT_NAMES:
        words.pop()
    return " ".join(words)


def find_places(text: str, spec: SlotSpec) -> list[_Found]:
    """Capitalised place names after one of the slot's cue words ("to Lisbon", "in New York")."""
    cues = spec.cues or ("to", "in")
    found: list[_Found] = []
    for m in re.finditer(rf"\b(?i:{_term_re(cues)})\s+(?:the\s+)?(?P<place>{_PLACE})", text):
        place = _trim_name(m["place"].strip())
        if _is_name(place):
            found.append(_Found(place, 0.7, m.start("place"), m.end("place"), m[0]))
    return found


def find_people(text: str, spec: SlotSpec) -> list[_Found]:
    """Names after a cue ("with Ana and Ben Okafor") and @mentions, joined as a list."""
    cues = spec.cues or ("with",)
    name = rf"{_NAME_WORD}(?:\s+{_NAME_WORD})?"
    found: list[_Found] = []
    for m in re.finditer(
        rf"\b(?i:{_term_re(cues)})\s+(?P<names>{name}(?:\s*(?:,|(?i:and)|&)\s*{name})*)", text
    ):
        names = [n.strip() for n in re.split(r"\s*(?:,|\band\b|&)\s*", m["names"]) if n.strip()]
        names = [_trim_name(n) for n in names if _is_name(n)]
        names = [n for n in names if n]
        if names:
            found.append(_Found(", ".join(names), 0.7, m.start("names"), m.end("names"), m[0]))
    mentions = re.findall(r"(?<!\w)@([A-Za-z][\w.-]*)", text)
    if mentions:
        start = text.index("@" + mentions[0])
        found.append(_Found(", ".join(dict.fromkeys(mentions)), 0.8, start, start, "@"))
    found.sort(key=lambda f: f.start)
    return found


_TEXT_STOP = (
    r"(?=\s+(?:for|with|by|in|at|from|before|after|next|this|that|which|so|and then|"
    r"due|starting|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday))\b"
    r"|[,.;:!?\n]|$)"
)


def find_free_text(text: str, spec: SlotSpec) -> list[_Found]:
    """The words after one of the slot's cues ("about X", "on X"), up to a clause boundary."""
    if not spec.cues:
        return []
    found: list[_Found] = []
    for m in re.finditer(
        rf"\b(?:{_term_re(spec.cues)})\s+(?P<v>[^,.;:!?\n]{{2,80}}?){_TEXT_STOP}",
        text,
        re.IGNORECASE,
    ):
        value = m["v"].strip()
        first = value.split()[0].casefold() if value else ""
        if value and first not in MONTHS and first not in WEEKDAYS and not first.isdigit():
            found.append(_Found(value, 0.6, m.start("v"), m.end("v"), m[0]))
    return found


# --- labelled values ("Budget: 900 EUR") ----------------------------------------------------


def normalise(value: str, spec: SlotSpec, *, today: date) -> str | None:
    """A raw value for `spec` in canonical form, or None if it does not parse as its type."""
    value = value.strip().strip("\"'").strip()
    if not value:
        return None
    if spec.type == "date":
        return parse_date(value, today=today)
    if spec.type == "money":
        return parse_money(value)
    if spec.type == "number":
        return parse_number(value)
    if spec.type == "choice":
        for choice in spec.choices:
            if value.casefold() == choice.casefold():
                return choice
        return parse_choice(value, spec)
    return value[:120]


def find_labelled(text: str, spec: SlotSpec, *, today: date) -> list[_Found]:
    """Values given as "label: value" (also "label = value", "label is value")."""
    labels = [spec.name, spec.name.replace("_", " "), spec.label, *spec.aliases]
    label_re = _term_re([lbl for lbl in labels if lbl])
    found: list[_Found] = []
    for m in re.finditer(
        rf"(?:^|(?<=[\s(,;*-]))(?:{label_re})\s*(?::|=|\bis\b|\bwill be\b)"
        rf"\s*(?P<v>[^\n;]{{1,120}})",
        text,
        re.IGNORECASE | re.MULTILINE,
    ):
        raw = re.split(r"(?<=[^\d])[.,](?:\s|$)|\s+(?:and|but)\s+", m["v"])[0]
        value = normalise(raw, spec, today=today)
        if value is not None:
            found.append(_Found(value, 0.95, m.start("v"), m.end("v"), m[0]))
    return found


# --- all together ---------------------------------------------------------------------------


def _alias_near(text: str, start: int, spec: SlotSpec) -> bool:
    before = text[max(0, start - 24) : start].casefold()
    terms = [spec.name.replace("_", " "), spec.label, *spec.aliases]
    return any(
        re.search(rf"(?<!\w){_words(t.casefold())}\W*(?:\w+\W+)?$", before) for t in terms if t
    )


def _assign(text: str, specs: Sequence[SlotSpec], mentions: Sequence[_Found]) -> dict[str, _Found]:
    """Give each mention to a slot of the same type: one named just before it wins, otherwise
    slots take mentions in order ("from 4 May to 9 May" -> start, end)."""
    result: dict[str, _Found] = {}
    unclaimed = list(mentions)
    for mention in mentions:
        for spec in specs:
            if spec.name not in result and _alias_near(text, mention.start, spec):
                result[spec.name] = mention
                unclaimed.remove(mention)
                break
    for spec in specs:
        if spec.name not in result and unclaimed:
            result[spec.name] = unclaimed.pop(0)
    return result


def detect(text: str, specs: Sequence[SlotSpec], *, today: date) -> dict[str, Detection]:
    """Every slot value that `text` states, by slot name (labelled values win)."""
    found: dict[str, _Found] = {}
    for spec in specs:
        labelled = find_labelled(text, spec, today=today)
        if labelled:
            found[spec.name] = labelled[0]

    def open_specs(slot_type: str) -> list[SlotSpec]:
        return [s for s in specs if s.type == slot_type and s.name not in found]

    found.update(_assign(text, open_specs("date"), find_dates(text, today=today)))
    found.update(_assign(text, open_specs("money"), find_money(text)))
    for spec in open_specs("number"):
        quantities = find_quantities(text, spec.units)
        if not quantities and spec.aliases:
            quantities = [
                _Found(_format_number(float(m["n"])), 0.7, m.start(), m.end(), m[0])
                for m in re.finditer(
                    rf"\b(?:{_term_re(spec.aliases)})\s+(?P<n>\d+)\b", text, re.IGNORECASE
                )
            ]
        if quantities:
            found[spec.name] = quantities[0]
    for spec in open_specs("choice"):
        mentions = find_choices(text, spec)
        distinct = list(dict.fromkeys(f.value for f in mentions))
        if len(distinct) == 1:
            found[spec.name] = mentions[0]
        elif distinct:  # conflicting mentions: keep the first, but unsure
            first = mentions[0]
            found[spec.name] = _Found(first.value, 0.45, first.start, first.end, first.text)
    for spec in open_specs("place"):
        places = find_places(text, spec)
        if places:
            found[spec.name] = places[0]
    for spec in open_specs("person"):
        people = find_people(text, spec)
        if people:
            found[spec.name] = people[0]
    for spec in open_specs("text"):
        texts = find_free_text(text, spec)
        if texts:
            found[spec.name] = texts[0]
    return {
        name: Detection(
            slot=name, value=f.value, confidence=f.confidence, start=f.start, evidence=f.text
        )
        for name, f in found.items()
    }
