"""How the skills write values and lists, as the person prefers (pure Python).

Dates are written from their canonical reading ("2027-06-12") in the person's date format
(``date_format``: iso, day_month_year, month_day_year; default "Friday 12 June 2027"), amounts
with their currency ("2,000 GBP"), lists as bullets or numbered (``list_style``), and the
spelling variant is left to the style pass (``agents/policies/style.py``), which every skill's
text goes through (``finish``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import date

from agents.policies.style import enforce
from agents.skills.facts import MONTHS, WEEKDAYS, Value

PLACEHOLDER = "to decide"


def say_date(raw: str, prefs: Mapping[str, str]) -> str:
    style = prefs.get("date_format", "")
    m = re.fullmatch(r"(\d{4})-(\d{2})(?:-(\d{2}))?", raw.strip())
    if m is None:
        return raw
    year, month = int(m[1]), int(m[2])
    if not 1 <= month <= 12:
        return raw
    if m[3] is None:
        return raw if style == "iso" else f"{MONTHS[month - 1]} {year}"
    try:
        day = date(year, month, int(m[3]))
    except ValueError:
        return raw
    if style == "iso":
        return day.isoformat()
    weekday = WEEKDAYS[day.weekday()]
    if style == "month_day_year":
        return f"{weekday}, {MONTHS[month - 1]} {day.day}, {year}"
    return f"{weekday} {day.day} {MONTHS[month - 1]} {year}"


def say_money(raw: str) -> str:
    m = re.fullmatch(r"([A-Z]{3})\s+([\d.,]+)", raw.strip())
    if m is None:
        return raw
    amount = m[2].replace(",", "")
    try:
        number = float(amount)
    except ValueError:
        return raw
    # "12.60 GBP" keeps its pence; "1,500 EUR" has none to show
    shown = f"{number:,.2f}".removesuffix(".00") if "." in amount else f"{int(number):,}"
    return f"{shown} {m[1]}"


def say(value: Value, prefs: Mapping[str, str]) -> str:
    """A value as the person reads it; an assumed one says what it was read from."""
    if value.type == "date":
        text = say_date(value.raw, prefs)
        if value.assumed and value.evidence:
            return f"{text} (assumed from “{value.evidence}”)"
        return f"{text} (assumed)" if value.assumed else text
    if value.type == "money":
        return say_money(value.raw)
    return value.raw


def numbered(prefs: Mapping[str, str]) -> bool:
    return prefs.get("list_style") == "numbered"


def as_list(items: Sequence[str], prefs: Mapping[str, str], *, ordered: bool = False) -> str:
    """Items as a markdown list: numbered when the person prefers it or the order matters."""
    if numbered(prefs) or (ordered and prefs.get("list_style") != "bullets"):
        return "\n".join(f"{i}. {item}" for i, item in enumerate(items, 1))
    return "\n".join(f"- {item}" for item in items)


def and_list(items: Sequence[str], word: str = "and") -> str:
    items = [i for i in items if i]
    if not items:
        return ""
    if len(items) == 1:
        return items[0]
    return f"{', '.join(items[:-1])} {word} {items[-1]}"


def sentence(text: str) -> str:
    text = " ".join(text.split()).strip()
    if not text:
        return text
    text = text[0].upper() + text[1:]
    return text if text[-1] in ".?!:" else text + "."


def finish(text: str, prefs: Mapping[str, str]) -> str:
    """The style pass over a skill's text: spelling variant, list style, date format, bold
    numbers, as the person prefers."""
    return enforce(text.strip(), prefs)


def lower_first(text: str) -> str:
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text
