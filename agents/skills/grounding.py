"""Where every value in a text came from (pure Python).

``unknown_values`` lists the numbers, dates (month and weekday names), amounts and names in a
text that none of the task's own texts, its known values (as written) nor its kind's data file
states: values of unknown origin. A skill's answer has none (the tests scan every draft); the
small model's free text is shown only when it has none and names at least one of the task's
own facts (``grounded``).
"""

from __future__ import annotations

import re
from functools import cache

from agents.policies.detect_names import find_known_places
from agents.policies.parse_numbers import digits_for_words
from agents.policies.templates import TEMPLATE_DIR
from agents.skills.facts import MONTHS, WEEKDAYS, TaskFacts
from agents.skills.generic import GENERIC_FILE
from agents.skills.write import say

_NUMBER = re.compile(r"(?<![\w.])\d[\d,.']*\d|(?<![\w.])\d(?![\w])")
_CALENDAR = re.compile(r"\b(?:" + "|".join(MONTHS + WEEKDAYS) + r")\b")
# A capitalised word inside a sentence (not after a line start, a list marker, a colon, a
# point or an opening quote): a name, unless the skills' own words or the texts have it.
_NAME = re.compile(r"(?<=[a-z,;)] )[A-Z][a-zà-ÿ]+(?:[ -][A-Z][a-zà-ÿ]+)*")
_OWN_WORDS = {"I", "Draft", "Open", "Checklist"}


@cache
def _kind_text(kind: str | None) -> str:
    path = TEMPLATE_DIR / f"{kind}.toml" if kind else GENERIC_FILE
    return path.read_text(encoding="utf-8") if path.is_file() else ""


def _numbers(text: str) -> set[str]:
    return {m[0].replace(",", "").replace("'", "").rstrip(".") for m in _NUMBER.finditer(text)}


def allowed_text(facts: TaskFacts) -> str:
    shown = " ".join(say(v, facts.prefs) + " " + v.raw for v in facts.known)
    return "\n".join(
        [facts.stated, shown, _kind_text(facts.kind.kind if facts.kind else None), *facts.parts]
    )


_LIST_MARKER = re.compile(r"(?m)^\s*\d{1,2}[.)]\s")


def unknown_values(text: str, facts: TaskFacts) -> list[str]:
    """The values in ``text`` of unknown origin (empty: every value is the task's own)."""
    text = _LIST_MARKER.sub("- ", text)
    allowed = allowed_text(facts)
    allowed_numbers = _numbers(digits_for_words(allowed)) | _numbers(allowed)
    lowered = allowed.casefold()
    out: list[str] = []
    for number in sorted(_numbers(text)):
        if number not in allowed_numbers:
            out.append(number)
    for m in _CALENDAR.finditer(text):
        if m[0].casefold() not in lowered:
            out.append(m[0])
    for place in find_known_places(text):
        if place.value.casefold() not in lowered:
            out.append(place.value)
    for m in _NAME.finditer(text):
        if m[0] not in _OWN_WORDS and m[0].casefold() not in lowered:
            out.append(m[0])
    return list(dict.fromkeys(out))


def names_a_fact(text: str, facts: TaskFacts) -> bool:
    """Whether the text names one of the task's own facts: a known value as written, or a
    distinctive word of its title or goal's parts."""
    lowered = text.casefold()
    for value in facts.known:
        for form in {value.raw, say(value, facts.prefs).split(" (")[0]}:
            if form and form.casefold() in lowered:
                return True
    words = re.findall(r"[^\W\d_]{5,}", " ".join([facts.title, *facts.parts]).casefold())
    return any(re.search(rf"\b{re.escape(w)}\b", lowered) for w in words)


def grounded(text: str, facts: TaskFacts) -> bool:
    """The small model's free text may be shown: it names the task's facts, invents none."""
    return bool(text.strip()) and names_a_fact(text, facts) and not unknown_values(text, facts)
