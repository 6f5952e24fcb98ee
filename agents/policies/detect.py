"""Typed slot detectors: dates, money, numbers with units, choices (with aliases), places,
people and labelled free text. Dates, money and numbers written as words are read by the
packages behind agents/policies/parse_dates.py, parse_money.py and parse_numbers.py; what is
left here finds choices and labels (names and free text: detect_names.py).

Each detector is deliberately conservative: it returns a value only when the text states it, with
a confidence that says how explicit the statement was. What the detectors miss, the model's
structured extraction (signals.SlotExtraction) can add; see situation.build_situation.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

from agents.policies import meaning, parse_dates, parse_numbers
from agents.policies import parse_money as money
from agents.policies.base import SlotSpec
from agents.policies.detect_names import (
    find_described_places,
    find_free_text,
    find_known_places,
    find_participle_clauses,
    find_people,
    find_places,
)
from agents.policies.detect_words import owned_elsewhere, term_re, words
from agents.policies.parse_numbers import Found as _Found


@dataclass(frozen=True)
class Detection:
    """A slot value found in a text: the value, how sure we are, and where it was."""

    slot: str
    value: str
    confidence: float
    start: int
    evidence: str


# --- dates, numbers and money (agents/policies/parse_*.py read them) ------------------------


def find_dates(text: str, *, today: date) -> list[_Found]:
    """Every date the text states, in order, as ISO dates (YYYY-MM-DD, or YYYY-MM for a month),
    relative dates read against `today` (the request's own date)."""
    return parse_dates.find_dates(text, today=today)


def parse_date(text: str, *, today: date) -> str | None:
    dates = find_dates(text, today=today)
    return dates[0].value if dates else None


def _number(token: str) -> float | None:
    return parse_numbers.number_of(token)


def _format_number(value: float) -> str:
    return parse_numbers.format_number(value)


def find_money(text: str) -> list[_Found]:
    """Amounts with a currency: "€1,500", "1500 EUR", "$2k", "3 thousand pounds", "CHF 1'200"."""
    return money.find_money(text)


def parse_money(text: str) -> str | None:
    return money.parse_amount(text)


_TIME_UNITS = {"minutes", "minute", "min", "mins", "days", "day", "nights", "night"}


def find_quantities(text: str, units: Sequence[str]) -> list[_Found]:
    """Numbers followed by one of `units`: "4 adults", "two people", "45-minute", "a week" (for
    a slot counted in days or nights), "an hour and a half" (for one counted in minutes)."""
    if not units:
        return []
    found = list(parse_numbers.find_counts(text, units))
    lowered = {u.casefold() for u in units}
    if lowered & _TIME_UNITS:
        unit = (
            "minutes"
            if lowered & {"minutes", "minute", "min", "mins"}
            else "nights"
            if lowered & {"nights", "night"}
            else "days"
        )
        for duration in parse_numbers.find_durations(text):
            value = parse_numbers.duration_in(duration.value, unit)
            if value is None or any(f.start <= duration.start < f.end for f in found):
                continue
            confidence = 0.75 if "week" in duration.text.casefold() else duration.confidence
            found.append(_Found(value, confidence, duration.start, duration.end, duration.text))
    # "a long weekend" is two nights only when no number of them is said ("for 3 nights")
    if lowered & {"days", "nights", "day", "night"} and not found:
        for m in re.finditer(r"\b(?:a\s+)?(?:long\s+)?weekend\b", text, re.IGNORECASE):
            if not re.search(
                r"(?i)(?:this|next|coming)\s+$", text[max(0, m.start() - 8) : m.start()]
            ):
                found.append(_Found("2", 0.5, m.start(), m.end(), m[0]))
    found.sort(key=lambda f: f.start)
    return found


def parse_number(text: str) -> str | None:
    m = re.search(r"\d+(?:\.\d+)?", parse_numbers.digits_for_words(text))
    return None if m is None else _format_number(float(m[0]))


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
        for m in re.finditer(rf"(?<!\w)(?:{term_re(terms)})(?!\w)", text, re.IGNORECASE):
            if not _NEGATED.search(text[max(0, m.start() - 24) : m.start()]):
                found.append(_Found(choice, 0.85, m.start(), m.end(), m[0]))
    found.sort(key=lambda f: f.start)
    return found


def parse_choice(text: str, spec: SlotSpec) -> str | None:
    choices = {f.value for f in find_choices(text, spec)}
    return choices.pop() if len(choices) == 1 else None


# Capital letters of the Latin, Greek and Cyrillic scripts ("Ñandú", "Øresund", "Łódź").

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
    if spec.type == "person":  # "Björn and Aroha", "Björn & Aroha" -> "Björn, Aroha"
        names = [
            n.strip() for n in re.split(r"\s*(?:,|;|&|\band\b|\bund\b|\by\b|\bet\b)\s*", value)
        ]
        return ", ".join(n for n in names if n)[:120] or None
    if spec.type == "choice":
        for choice in spec.choices:
            if value.casefold() == choice.casefold():
                return choice
        return parse_choice(value, spec)
    return value[:120]


# Where a labelled value ends: a sentence's point or a comma (not inside "1,500"), "and", "but".
_VALUE_END = r"(?<=[^\d])[.,](?:\s|$)|\s+(?:and|but)\s+"
# A list of people goes on over commas and "and" ("Attendees: Zoë, Søren and Mei Lin"): it ends
# at a point, at a comma before a lower-case word ("Zoë and Søren, then lunch") or at "but".
_LOWER = "".join(chr(c) for c in range(0x61, 0x530) if chr(c).islower())
_PEOPLE_END = rf"(?<=[^\d])\.(?:\s|$)|,\s*(?=[{_LOWER}])|\s+but\s+"


_WILL_BE = r"\b(?:will|should|must|shall|needs?\s+to|has\s+to|ought\s+to)\s+be\b"


def find_labelled(text: str, spec: SlotSpec, *, today: date) -> list[_Found]:
    """Values given as "label: value" (also "label = value", "label is value", and as a wish
    or a correction: "the servings should be 5", "budget must be under 900")."""
    labels = [spec.name, spec.name.replace("_", " "), spec.label, *spec.aliases]
    label_re = term_re([lbl for lbl in labels if lbl])
    found: list[_Found] = []
    for m in re.finditer(
        rf"(?:^|(?<=[\s(,;*-]))(?:{label_re})\s*(?::|=|\bis\b|{_WILL_BE})"
        rf"\s*(?P<v>[^\n;]{{1,120}})",
        text,
        re.IGNORECASE | re.MULTILINE,
    ):
        raw = re.split(_PEOPLE_END if spec.type == "person" else _VALUE_END, m["v"])[0]
        value = normalise(raw, spec, today=today)
        if value is not None:
            found.append(_Found(value, 0.95, m.start("v"), m.end("v"), m[0]))
    return found


# The @mention a message starts with names whom it is addressed to (the agent), not a value.
_ADDRESSEE = re.compile(r"^\s*(?:(?:hey|hi|hello)\s+)?@[\w.-]*\w[\s,:;!-]*", re.IGNORECASE)

# --- counts read by meaning ("two rooms", "for 3", "a group of 4") ---------------------------

# A number and the word after it: what it counts ("3 tickets", "2 rooms", "1 star").
_COUNT = re.compile(
    r"(?<![\w.,:/$€£-])(?P<n>\d{1,4})(?![\w,:/%-]|\.\d)(?:\s+(?P<noun>[^\W\d_]{2,}))?"
)
_NOT_COUNTED = frozenset(
    [
        "am",
        "pm",
        "o",
        "oclock",
        "percent",
        "and",
        "or",
        "to",
        "of",
        "in",
        "on",
        "at",
        "the",
        "a",
        "an",
        "more",
        "less",
        "for",
        "with",
        "from",
        "by",
        "me",
        "you",
        "it",
        "this",
        "that",
        "there",
        "is",
        "are",
    ]
)
# "for 3", "for two": the people something is for (the one thing a bare count after "for" means).
_FOR_BEFORE = re.compile(r"(?i)\b(?:for|of|be|party\s+of|group\s+of)\s*$")
COUNT_MEANING_FLOOR = 0.1


def find_counts_by_meaning(
    text: str, specs: Sequence[SlotSpec], taken: Sequence[_Found]
) -> dict[str, _Found]:
    """Counts that no unit word names, each given to the number slot whose label and
    description are closest in meaning to what is counted ("two rooms" -> the number of
    rooms, "4 tickets" -> the number of tickets; "for 3" counts people). `text` has its number
    words in digits; spans in `taken` (dates, money, other slots' values) are not counts.
    Needs an embedding installed (agents/policies/meaning.py): else nothing."""
    if not specs or not meaning.installed():
        return {}
    mentions: list[tuple[_Found, str, str]] = []
    for m in _COUNT.finditer(text):
        if any(f.start < m.end("n") and m.start() < f.end for f in taken):
            continue
        noun = (m["noun"] or "").casefold()
        if noun in _NOT_COUNTED:
            noun = ""
        if not noun and not _FOR_BEFORE.search(text[max(0, m.start() - 10) : m.start()]):
            continue
        # what is counted, with the words that lead to it ("a reservation for 3 people")
        before = " ".join(re.findall(r"[^\W\d_]+", text[max(0, m.start() - 40) : m.start()])[-3:])
        counted = f"{m['n']} {noun or 'people'}"
        end = m.end() if noun else m.end("n")
        found = _Found(m["n"], 0.7, m.start(), end, text[m.start() : end])
        mentions.append((found, counted, f"{before} {counted}".strip()))
    if not mentions:
        return {}
    # what is counted weighs most; the words before it tell apart two slots counting alike
    near = meaning.closest([c for _, c, _ in mentions], specs)
    wide = meaning.closest([w for _, _, w in mentions], specs)
    if near is None or wide is None:
        return {}
    scores = [
        [0.6 * a + 0.4 * b for a, b in zip(ra, rb, strict=True)]
        for ra, rb in zip(near, wide, strict=True)
    ]
    pairs = sorted(
        ((row[j], i, j) for i, row in enumerate(scores) for j in range(len(specs))), reverse=True
    )
    result: dict[str, _Found] = {}
    used: set[int] = set()
    for score, i, j in pairs:
        bare = mentions[i][0].text == mentions[i][0].value  # "for 3": people, nothing named
        if (score < COUNT_MEANING_FLOOR and not bare) or i in used or specs[j].name in result:
            continue
        if max(scores[i]) > score:  # a count goes to the slot it means most, or to none
            continue
        result[specs[j].name] = mentions[i][0]
        used.add(i)
    return result


# --- places read by meaning ("from Sacramento to SF") ------------------------------------------

_PLACE_CUES = ("to", "in", "from", "at", "near", "around", "for", "into", "of")
PLACE_MEANING_FLOOR = 0.1
# The word that leads to a place ("from", "to") said in a slot's description says much.
PLACE_CUE_BONUS = 0.25


def _lead_bonus(lead: str, spec: SlotSpec, said: set[str]) -> float:
    """The word before a place against a slot: one of its cues, or a preposition its
    description uses ("City where bus is leaving from"), says it; another of its cues' kind
    says it is not this slot's ("from Lisbon" is not a destination cued by "to")."""
    if lead in spec.cues or (lead in _PLACE_CUES and lead in said):
        return PLACE_CUE_BONUS
    if spec.cues and lead in _PLACE_CUES:
        return -PLACE_CUE_BONUS
    return 0.0


def find_places_by_meaning(text: str, specs: Sequence[SlotSpec]) -> dict[str, _Found]:
    """Each place named in the text given to the one place slot it fits best: the words
    before it (and the word that leads to it: "from", "to", "in") against each slot's label
    and description. A place fills one slot, never every place slot at once."""
    cues = tuple(dict.fromkeys([*_PLACE_CUES, *(c for s in specs for c in s.cues)]))
    probe = SlotSpec(name="place", type="place", cues=cues)
    mentions = [*find_places(text, probe), *find_known_places(text)]
    unique: list[_Found] = []
    for mention in sorted(mentions, key=lambda f: (f.start, -f.end)):
        if not any(u.start < mention.end and mention.start < u.end for u in unique):
            unique.append(mention)
    if not unique or not meaning.installed():
        return {}
    contexts, leads = [], []
    for mention in unique:
        before = re.findall(r"[^\W\d_]+", text[max(0, mention.start - 40) : mention.start])
        contexts.append(" ".join([*before[-4:], mention.value]))
        leads.append(before[-1].casefold() if before else "")
    scores = meaning.closest(contexts, specs)
    if scores is None:
        return {}
    said = [set(re.findall(r"[a-z]+", f"{s.name} {s.description}".casefold())) for s in specs]
    pairs = sorted(
        (
            (row[j] + _lead_bonus(leads[i], specs[j], said[j]), i, j)
            for i, row in enumerate(scores)
            for j in range(len(specs))
        ),
        reverse=True,
    )
    result: dict[str, _Found] = {}
    used: set[int] = set()
    for score, i, j in pairs:
        if score >= PLACE_MEANING_FLOOR and i not in used and specs[j].name not in result:
            result[specs[j].name] = unique[i]
            used.add(i)
    return result


# --- all together ---------------------------------------------------------------------------


def _alias_near(text: str, start: int, spec: SlotSpec) -> bool:
    before = text[max(0, start - 24) : start].casefold()
    terms = [spec.name.replace("_", " "), spec.label, *spec.aliases]
    return any(
        re.search(rf"(?<!\w){words(t.casefold())}\W*(?:\w+\W+)?$", before) for t in terms if t
    )


def _assign(
    text: str, specs: Sequence[SlotSpec], mentions: Sequence[_Found], *, owned: bool = False
) -> dict[str, _Found]:
    """Give each mention to a slot of the same type: one named just before it wins, otherwise
    slots take mentions in order ("from 4 May to 9 May" -> start, end). With `owned`, a mention
    that belongs to something else named on its line never fills a slot by order alone."""
    result: dict[str, _Found] = {}
    unclaimed = list(mentions)
    for mention in mentions:
        for spec in specs:
            if spec.name not in result and _alias_near(text, mention.start, spec):
                result[spec.name] = mention
                unclaimed.remove(mention)
                break
    for spec in specs:
        free = [m for m in unclaimed if not (owned and owned_elsewhere(text, m.start, spec))]
        if spec.name not in result and free:
            result[spec.name] = free[0]
            unclaimed.remove(free[0])
    return result


def detect(text: str, specs: Sequence[SlotSpec], *, today: date) -> dict[str, Detection]:
    """Every slot value that `text` states, by slot name (labelled values win). Numbers written
    as words are read first ("twelve people" -> "12 people"); evidence quotes that reading."""
    # "@Assistant, plan ...": the agent addressed, never a person, place or topic (blanked, so
    # every span keeps its place); "sync with @carol" still names Carol.
    text = _ADDRESSEE.sub(lambda m: " " * len(m[0]), text)
    original, text = text, parse_numbers.digits_for_words(text)
    found: dict[str, _Found] = {}
    for spec in specs:
        labelled = find_labelled(original, spec, today=today)
        if labelled:
            found[spec.name] = labelled[0]

    by_type = {s.name: s.type for s in specs}

    def open_specs(slot_type: str) -> list[SlotSpec]:
        return [s for s in specs if s.type == slot_type and s.name not in found]

    dates, amounts = find_dates(text, today=today), find_money(text)  # each read once
    found.update(_assign(text, open_specs("date"), dates))
    found.update(_assign(text, open_specs("money"), amounts, owned=True))
    for spec in open_specs("number"):
        quantities = find_quantities(text, spec.units)
        if not quantities and spec.aliases:
            quantities = [
                _Found(_format_number(float(m["n"])), 0.7, m.start(), m.end(), m[0])
                for m in re.finditer(
                    rf"\b(?:{term_re(spec.aliases)})\s+(?P<n>\d+)\b", text, re.IGNORECASE
                )
            ]
        if quantities:
            found[spec.name] = quantities[0]
    spans = [*found.values(), *dates, *amounts]
    found.update(find_counts_by_meaning(text, open_specs("number"), spans))
    for spec in open_specs("choice"):
        mentions = find_choices(original, spec)
        distinct = list(dict.fromkeys(f.value for f in mentions))
        if len(distinct) == 1:
            found[spec.name] = mentions[0]
        elif distinct:  # conflicting mentions: keep the first, but unsure
            first = mentions[0]
            found[spec.name] = _Found(first.value, 0.45, first.start, first.end, first.text)
    if len(open_specs("place")) > 1:  # one place fills one slot, the one it fits best
        found.update(find_places_by_meaning(original, open_specs("place")))
    placed = [f for n, f in found.items() if by_type.get(n) == "place"]
    for spec in open_specs("place"):
        places = find_places(original, spec)
        described = find_described_places(original, spec) if "at" in spec.cues else []
        if places and described and described[0].start < places[0].start:
            places = described  # "at the rooftop at Ribeira": the first thing after the cue
        if not places and spec.required:  # a known city or country named anywhere, once
            taken = {f.value for f in found.values()}
            places = [p for p in find_known_places(original) if p.value not in taken]
            places = places or find_described_places(original, spec)
        places = [p for p in places if not any(p.start < f.end and f.start < p.end for f in placed)]
        if places:
            found[spec.name] = places[0]
            placed.append(places[0])
    for spec in open_specs("person"):
        people = find_people(original, spec)
        if people:
            found[spec.name] = people[0]
    # Words that are another slot's choice ("for developers", "for the staff wiki") are that
    # slot's value, not this one's free text.
    choice_terms = [
        t
        for s in specs
        if s.type == "choice"
        for c in s.choices
        for t in (c, *s.choice_aliases.get(c, ()))
    ]
    choice_re = (
        re.compile(rf"(?i)(?<!\w)(?:{term_re(choice_terms)})(?!\w)") if choice_terms else None
    )
    for spec in open_specs("text"):
        texts = [
            t
            for t in find_free_text(original, spec)
            if choice_re is None or not choice_re.search(t.value)
        ]
        if texts:
            found[spec.name] = texts[0]
    still_open = [s for s in open_specs("text") if s.required]
    if len(still_open) == 1:  # "..., affecting the search cluster, ...": what the work is about
        held = [f.value.casefold() for f in found.values()]
        for clause in find_participle_clauses(original):
            if not any(t and t in clause.value.casefold() for t in held):
                found[still_open[0].name] = clause
                break
    return {
        name: Detection(
            slot=name, value=f.value, confidence=f.confidence, start=f.start, evidence=f.text
        )
        for name, f in found.items()
    }
