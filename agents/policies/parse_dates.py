"""Dates and times in running text, relative to the request's own date: ``dateparser`` (its
search, then a filter that drops its known false hits such as "We" read as Wednesday or "45
minutes" read as a time). Pure Python, no I/O besides the package's own data files, loaded once
on first use.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from functools import cache

import dateparser  # type: ignore[import-untyped]

from agents.policies.parse_numbers import Found

# dateparser's search warns about a pytz/zoneinfo detail on some platforms: not ours to fix.
warnings.filterwarnings("ignore", module="dateparser")


# --- dates and times ---------------------------------------------------------------------------

_DATE_WORDS = re.compile(
    r"\d|\b(?:today|tonight|tomorrow|yesterday|weeks?|weekend|months?|years?|days?|monday|tuesday|wednesday"
    r"|thursday|friday|saturday|sunday|january|february|march|april|may|june|july|august"
    r"|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
    r"|mon|tue|wed|thu|fri|sat|sun)\b",
    re.IGNORECASE,
)
_WEEKDAY_NAMES = (
    "monday",
    "tuesday",
    "wednesday",
    "thursday",
    "friday",
    "saturday",
    "sunday",
)
# What dateparser reads as a date but is not one in a request.
_NOT_A_DATE = re.compile(
    r"^(?:\d+(?:[.,]\d+)?\s*(?:minutes?|mins?|hours?|hrs?|h|seconds?|secs?|days?|nights?|weeks?"
    r"|months?|years?|people|persons?|pm|am)?|\d{1,2}|\d{5,}|(?:in|on|at|for|by)\s+\d+)$",
    re.IGNORECASE,
)
_MONTHS_ALT = (
    r"january|february|march|april|may|june|july|august|september|october|november"
    r"|december|jan|feb|mar|apr|jun|jul|aug|sept?|oct|nov|dec"
)
_MONTH_NAME = rf"\b(?:{_MONTHS_ALT})\b"
_WEEKDAY_OR_NUMERIC = re.compile(
    r"(?i)\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{4}-\d{1,2}-\d{1,2}\b"
    r"|\b\d{1,2}[.-]\d{1,2}[.-]\d{2,4}\b"
)
# A phrase is a date only if it names a month, a weekday, today/tomorrow, or is shaped like one.
_DATE_SHAPE = re.compile(
    rf"(?i){_MONTH_NAME}(?<!\bmay)|\bMay\b|\b(?:today|tonight|tomorrow|noon|midnight)\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
    r"|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{4}-\d{1,2}-\d{1,2}\b"
    r"|\b\d{1,2}[.-]\d{1,2}[.-]\d{2,4}\b"
    r"|\b\d{1,2}:\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b"
)
_RELATIVE = re.compile(
    r"(?i)\b(?:in|within)\s+(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten)"
    r"\s+(?:days?|weeks?|months?)\b|\b(?:next|this|coming)\s+(?:week|month)\b"
)
# 03/04, 03/04/2027, 03.04.2027 (a dotted pair such as "8.6" is a version or a number).
_NUMERIC_DATE = re.compile(
    r"(?<![\d/.-])(\d{1,2})(?:(/)(\d{1,2})(?:/(\d{2}|\d{4}))?|(\.)(\d{1,2})\.(\d{2}|\d{4}))(?![\d/.-])"
)
_LANGUAGES = ("en",)


def _settings(today: date) -> dict[str, object]:
    return {
        "RELATIVE_BASE": datetime(today.year, today.month, today.day),
        "PREFER_DATES_FROM": "future",
        "RETURN_AS_TIMEZONE_AWARE": False,
        "STRICT_PARSING": False,
    }


@dataclass(frozen=True)
class DateMention:
    start: int
    end: int
    text: str
    when: datetime
    has_time: bool
    has_day: bool


def _has_time(text: str) -> bool:
    return bool(
        re.search(r"\d{1,2}:\d{2}|\d\s*(?:am|pm)\b|\b(?:noon|midday|midnight)\b", text, re.I)
    )


@cache
def _parse_phrase(phrase: str, today: date) -> datetime | None:
    try:
        return dateparser.parse(phrase, languages=list(_LANGUAGES), settings=_settings(today))
    except Exception:  # dateparser raises on odd input (overflow, locale data): no date then
        return None


def _dateparser_hits(text: str, today: date) -> list[tuple[str, datetime]]:
    """Phrases dateparser reads as a date, found around each word that can anchor one (a digit,
    a month or weekday name, today/tomorrow, week...): the longest phrase of up to six words
    around the anchor that dateparser accepts. (Its own search misses dates in long sentences.)"""
    tokens = list(re.finditer(r"[^\s,;()!?]+", text))
    words = [t[0].rstrip(".:") for t in tokens]
    hits: list[tuple[str, datetime]] = []
    covered = -1
    for i, word in enumerate(words):
        if i <= covered or not _DATE_WORDS.search(word):
            continue
        best: tuple[int, int, datetime] | None = None
        for a in range(max(0, i - 2), i + 1):
            for b in range(min(len(words) - 1, i + 3), i - 1, -1):
                if best is not None and (b - a) <= (best[1] - best[0]):
                    break
                phrase = text[tokens[a].start() : tokens[b].start() + len(words[b])]
                when = _parse_phrase(phrase, today)
                if when is not None:
                    best = (a, b, when)
                    break
        if best is not None:
            a, b, when = best
            while (
                b > i
                and _parse_phrase(
                    text[tokens[a].start() : tokens[b - 1].start() + len(words[b - 1])], today
                )
                == when
            ):
                b -= 1  # "tomorrow about the" -> "tomorrow"
            hits.append((text[tokens[a].start() : tokens[b].start() + len(words[b])], when))
            covered = b
    return hits


_DAY_RANGE = re.compile(
    rf"(?i)\b(?P<d1>[0-3]?\d)(?:st|nd|rd|th)?\s*(?:-|\u2013|to|until)\s*"
    rf"(?P<d2>[0-3]?\d)(?:st|nd|rd|th)?\s+(?:of\s+)?(?P<m>{_MONTHS_ALT})\b\.?"
    rf"(?:,?\s+(?P<y>(?:19|20)\d\d)\b)?"
    rf"|\b(?P<m2>{_MONTHS_ALT})\.?\s+(?P<d3>[0-3]?\d)(?:st|nd|rd|th)?\s*"
    rf"(?:-|\u2013|to|until)\s*(?P<d4>[0-3]?\d)(?:st|nd|rd|th)?\b(?:,?\s+(?P<y2>(?:19|20)\d\d)\b)?"
)


def _ranges(text: str, today: date) -> list[DateMention]:
    """ "4-9 May", "Aug 3-5", "10-13 Sept 2026": two days of one month, in the year given
    (dateparser reads single dates only)."""
    out = []
    for m in _DAY_RANGE.finditer(text):
        month = m["m"] or m["m2"]
        year = m["y"] or m["y2"]
        if year:
            month = f"{month} {year}"
        first, second = (m["d1"], m["d2"]) if m["m"] else (m["d3"], m["d4"])
        spans = (
            ((m.start("d1"), m.end("d1")), (m.start("d2"), m.end()))
            if m["m"]
            else ((m.start(), m.end("d3")), (m.start("d4"), m.end()))
        )
        for day, (start, end) in zip((first, second), spans, strict=True):
            when = _parse_phrase(f"{day} {month}", today)
            if when is not None:
                out.append(DateMention(start, end, text[start:end], when, False, True))
    return out


# "the 8th", "on the 9th", "the 6th of this month": a day of the month with no month named.
_ORDINAL_DAY = re.compile(
    r"(?i)(?<!\w)(?:the\s+)(?P<d>[0-3]?\d)(?:st|nd|rd|th)\b(?:\s+of\s+(?P<w>this|the|next)\s+month\b)?"
    r"|(?<!\w)(?P<d2>[0-3]?\d)(?:st|nd|rd|th)\s+of\s+(?P<w2>this|the|next)\s+month\b"
)
# After "the 8th" a month or a counted thing ("the 3rd floor", "the 2nd edition") says it is
# not a day of this month.
_AFTER_ORDINAL = re.compile(
    rf"(?i)^\s*(?:of\s+)?(?:{_MONTHS_ALT})\b|^\s+(?!(?:too|at|in|for|and|or|please|then|instead|is|would|if|as|of|so|works?|would|around|maybe|will)\b)[a-z]+"
)


def _ordinal_days(text: str, today: date) -> list[DateMention]:
    """ "the 8th" as the next 8th from `today` (this month's, or next month's once it passed;
    "of next month" next month's). A month named just before it is dateparser's to read."""
    out = []
    for m in _ORDINAL_DAY.finditer(text):
        if _AFTER_ORDINAL.search(text[m.end() : m.end() + 16]) or re.search(
            rf"(?i)\b(?:{_MONTHS_ALT})\.?\s*$", text[max(0, m.start() - 12) : m.start()]
        ):
            continue
        day = int(m["d"] or m["d2"])
        which = (m["w"] or m["w2"] or "").casefold()
        probe = today.replace(day=1)
        if which == "next" or (not which and day < today.day):
            probe = (probe.replace(day=28) + timedelta(days=4)).replace(day=1)
        try:
            when = probe.replace(day=day)
        except ValueError:
            continue
        out.append(
            DateMention(
                m.start(), m.end(), m[0], datetime.combine(when, datetime.min.time()), False, True
            )
        )
    return out


def date_mentions(text: str, *, today: date) -> list[DateMention]:
    """Every date (and time) dateparser finds in the text, false hits dropped, in order."""
    mentions: list[DateMention] = []
    mentions.extend(_special_relative(text, today))
    mentions.extend(_ranges(text, today))
    mentions.extend(
        m
        for m in _ordinal_days(text, today)
        if not any(o.start < m.end and m.start < o.end for o in mentions)
    )
    results = _dateparser_hits(text, today)
    cursor = 0
    for phrase, when in results:
        start = text.find(phrase, cursor)
        if start < 0:
            start = text.find(phrase)
        if start < 0:
            continue
        end = start + len(phrase)
        cursor = end
        core = re.sub(
            r"^(?:from|on|at|by|in|for|the|until|till|to|about)\s+", "", phrase.strip(), flags=re.I
        )
        relative = bool(_RELATIVE.search(phrase))
        if not (relative or _DATE_SHAPE.search(phrase)):
            continue  # "a 45-minute", "year 9", "€1", "two days": not dates
        if any(m.start < end and start < m.end for m in mentions):
            continue
        months = re.findall(_MONTH_NAME, phrase, flags=re.I)
        if months and all(m == "may" for m in months) and not _WEEKDAY_OR_NUMERIC.search(phrase):
            continue  # "you may 2 ..." is not a date
        when = _fix_weekday_ordinal(core, when, today)
        if when.date() == _a_year_after(today) and not re.search(
            r"\b\d{4}\b|\bnext\s+year\b", phrase, re.I
        ):
            when = datetime.combine(today, when.time())  # "1st of March" said on 1 March
        has_day = (
            relative
            or bool(re.search(r"\d|today|tonight|tomorrow|day|week", core, re.I))
            or any(d in core.casefold() for d in _WEEKDAY_NAMES)
        )
        if re.fullmatch(
            rf"(?i)(?:in|during|for|about)?\s*{_MONTH_NAME}\.?(?:\s+\d{{4}})?", phrase.strip()
        ):
            has_day = False  # "in May": a month, not a day
        mentions.append(DateMention(start, end, phrase, when, _has_time(phrase), has_day))
    mentions.sort(key=lambda m: m.start)
    return mentions


def _a_year_after(today: date) -> date | None:
    try:
        return today.replace(year=today.year + 1)
    except ValueError:  # 29 February
        return None


# A time of day alone ("around 13:15", "at 7 pm") names no day: it dates nothing.
_DAY_NAMED = re.compile(
    rf"(?i){_MONTH_NAME}|\b(?:today|tonight|tomorrow|yesterday|weekend|week|month)\b"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b\d{1,2}/\d{1,2}\b|\b\d{4}-\d{1,2}"
    r"|\b\d{1,2}[.-]\d{1,2}[.-]\d{2,4}\b|\b\d{1,2}(?:st|nd|rd|th)\b|\bin\s+\d+\s+days?\b"
)


def _special_relative(text: str, today: date) -> list[DateMention]:
    out = []
    for m in re.finditer(r"\b(?:the\s+)?day\s+after\s+tomorrow\b", text, re.I):
        when = datetime.combine(today + timedelta(days=2), datetime.min.time())
        out.append(DateMention(m.start(), m.end(), m[0], when, False, True))
    for m in re.finditer(r"\b(?:this|next|coming)\s+weekend\b", text, re.I):
        ahead = (5 - today.weekday()) % 7 or 7
        if m[0].casefold().startswith("next") and ahead < 2:
            ahead += 7
        when = datetime.combine(today + timedelta(days=ahead), datetime.min.time())
        out.append(DateMention(m.start(), m.end(), m[0], when, False, True))
    return out


def _fix_weekday_ordinal(core: str, when: datetime, today: date) -> datetime:
    """ "Thursday the 12th": the next 12th that is a Thursday (dateparser misreads it)."""
    m = re.search(
        rf"(?i)\b({'|'.join(_WEEKDAY_NAMES)})\s+(?:the\s+)?(\d{{1,2}})(?:st|nd|rd|th)\b", core
    )
    if m is None:
        return when
    weekday, day = _WEEKDAY_NAMES.index(m[1].casefold()), int(m[2])
    probe = date(today.year, today.month, 1)
    for _ in range(24):
        try:
            candidate = probe.replace(day=day)
        except ValueError:
            candidate = None
        if candidate and candidate >= today and candidate.weekday() == weekday:
            return datetime.combine(candidate, when.time())
        probe = (probe.replace(day=28) + timedelta(days=4)).replace(day=1)
    return when


# Time words that point at no particular day: a reading of them is a guess, not a value.
_VAGUE_DATE = re.compile(
    r"(?i)\b(?:the\s+other\s+(?:day|week)|recently|lately|soon|some\s*day|sometime|"
    r"some\s+time|a\s+while\s+(?:ago|back)|one\s+of\s+these\s+days|whenever|a\s+few\s+days"
    r"\s+ago|the\s+day\s+before|the\s+week\s+before)\b"
)


def find_dates(text: str, *, today: date) -> list[Found]:
    """Dates as ISO strings (YYYY-MM-DD; YYYY-MM for a month alone). A numeric date with two
    readings ("03/04") comes with a lower confidence; see `numeric_date_readings`."""
    found = []
    for mention in date_mentions(text, today=today):
        if mention.has_time and not _DAY_NAMED.search(mention.text):
            continue  # "around 13:15": a time, no day
        ambiguous = numeric_date_readings(mention.text, today=today)
        confidence = 0.45 if len(ambiguous) > 1 else 0.9
        if re.search(r"(?i)\bnext\s+week\b", mention.text):
            confidence = 0.6
        value = (
            mention.when.date().isoformat() if mention.has_day else mention.when.strftime("%Y-%m")
        )
        if not mention.has_day:
            confidence = 0.45  # "in June": a month, not yet a day (a guess, worth a question)
        if _VAGUE_DATE.search(mention.text):
            confidence = 0.4  # "the other day", "soon": no day anyone can check
        if re.fullmatch(r"(?i)today|tonight|now", mention.text.strip()) and not re.search(
            r"(?i)\b(?:on|for|from|by|until|till|since|starting|is|was|be|held|happened)\s+$",
            text[max(0, mention.start - 12) : mention.start],
        ):
            confidence = 0.45  # "today would be lovely": when the work is wanted, not its date
        found.append(Found(value, confidence, mention.start, mention.end, mention.text))
    for m in _VAGUE_DATE.finditer(text):  # dateparser reads none of these: a guess, in place
        if any(f.start < m.end() + 12 and m.start() < f.end for f in found):
            continue  # it overlaps or qualifies a real date ("sometime in June")
        past = re.search(r"(?i)other|recent|lately|ago|back|before", m[0])
        guess = today - timedelta(days=3) if past else today + timedelta(days=7)
        found.append(Found(guess.isoformat(), 0.4, m.start(), m.end(), m[0]))
    found.sort(key=lambda f: f.start)
    return found


def find_times(text: str, *, today: date) -> list[Found]:
    """Times of day ("3pm", "15:30", "noon"), as HH:MM."""
    return [
        Found(m.when.strftime("%H:%M"), 0.9, m.start, m.end, m.text)
        for m in date_mentions(text, today=today)
        if m.has_time
    ]


def numeric_dates(text: str) -> list[tuple[str, int, int]]:
    """Every numeric date in the text as (as written, first number, second number)."""
    return [(m[0], int(m[1]), int(m[3] or m[6])) for m in _NUMERIC_DATE.finditer(text)]


def numeric_date_readings(text: str, *, today: date) -> tuple[str, ...]:
    """Both readings of a numeric date such as "03/04" (3 April or March 4), when both exist
    and differ; one reading (or none) otherwise."""
    m = _NUMERIC_DATE.search(text)
    if m is None:
        return ()
    a = int(m[1])
    b, year_text = (int(m[3]), m[4]) if m[2] else (int(m[6]), m[7])
    readings = []
    for day, month in ((a, b), (b, a)):
        try:
            year = int(year_text) if year_text else today.year
            if year_text and len(year_text) == 2:
                year += 2000
            candidate = date(year, month, day)
            if not year_text and candidate < today:
                candidate = candidate.replace(year=today.year + 1)
            readings.append(candidate.isoformat())
        except ValueError:
            continue
    return tuple(dict.fromkeys(readings))
