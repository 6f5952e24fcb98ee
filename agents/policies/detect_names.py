"""Slot detectors for names and free text: places (after a cue word, described, or known to
the gazetteer), people (after a cue word or @-mentioned), labelled free text and participle
clauses. Conservative like every detector: a value only when the text states it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date

from agents.policies import parse_dates, parse_numbers, places
from agents.policies.base import SlotSpec
from agents.policies.detect_words import MONTHS, NOT_NAMES, WEEKDAYS, term_re
from agents.policies.parse_numbers import Found as _Found

# --- names, free text -----------------------------------------------------------------------

_UPPER = "".join(chr(c) for c in range(0x41, 0x530) if chr(c).isupper())
_NAME_WORD = rf"[{_UPPER}][\w'\u2019-]*"
_PLACE = rf"{_NAME_WORD}(?:\s+{_NAME_WORD}|\s+(?:de|da|del|do|of|la|le|upon)\s+{_NAME_WORD})*"


def _is_name(candidate: str) -> bool:
    words = candidate.split()
    return bool(words) and words[0].casefold() not in NOT_NAMES


def _trim_name(candidate: str) -> str:
    """Drop trailing capitalised words that are times, not names ("Ana Tomorrow" -> "Ana")."""
    words = candidate.split()
    while words and words[-1].casefold() in NOT_NAMES:
        words.pop()
    return " ".join(words)


def find_places(text: str, spec: SlotSpec) -> list[_Found]:
    """Capitalised place names after one of the slot's cue words ("to Lisbon", "in New York")."""
    cues = spec.cues or ("to", "in")
    found: list[_Found] = []
    for m in re.finditer(rf"\b(?i:{term_re(cues)})\s+(?:the\s+)?(?P<place>{_PLACE})", text):
        place = _trim_name(m["place"].strip())
        if _is_name(place):
            end = m.start("place") + len(place)
            # "at Gamla Stan hall": a venue's own noun after its name, up to the clause's end
            tail = re.match(rf"\s+([a-zà-ÿ]+){_TEXT_STOP}", text[end:])
            if tail and place == m["place"].strip() and tail[1].casefold() not in _NOT_PLACE_TAILS:
                place, end = f"{place} {tail[1]}", end + tail.end()
            found.append(_Found(place, 0.7, m.start("place"), end, m[0]))
    return found


# Words after a place name that are not part of it ("to Lisbon tomorrow", "in Kraków only").
_NOT_PLACE_TAILS = frozenset(
    [
        "please",
        "undecided",
        "tbd",
        "tbc",
        "today",
        "tomorrow",
        "tonight",
        "now",
        "then",
        "soon",
        "only",
        "too",
        "again",
        "first",
        "instead",
        "maybe",
        "right",
        "pls",
        "thanks",
        "ok",
        "and",
        "or",
        "but",
    ]
)


_NOT_PLACES = re.compile(
    r"(?i)^(?:the\s+)?(?:morning|afternoon|evening|night|end|start|beginning|moment|weekend|"
    r"meantime|latest|least|most|time|same|least|first|last|next|past|future|office\s+hours)\b"
)


def find_described_places(text: str, spec: SlotSpec) -> list[_Found]:
    """ "at our garden", "at the rooftop at Ribeira": a described place after a cue (less sure
    than a name)."""
    cues = spec.cues or ("at", "in")
    found = []
    for m in re.finditer(
        rf"\b(?i:{term_re(cues)})\s+(?P<place>(?i:the|our|my|their|a)\s+[^,.;:!?\n]{{2,60}}?)"
        rf"{_TEXT_STOP}",
        text,
    ):
        place = m["place"].strip()
        if not _NOT_PLACES.match(re.sub(r"(?i)^(?:our|my|their|a)\s+", "", place)):
            found.append(_Found(place, 0.6, m.start("place"), m.end("place"), m[0]))
    return found


# A list of people ("Team: Farah, Bo"): its names are people, not places ("Farah").
_PEOPLE_LIST = re.compile(
    r"(?i)\b(?:team|attendees|people|travell?ers|participants|contacts|guests|members|who|"
    r"with|owners?|invitees|speakers)\b[^:\n.;]{0,20}:[^\n.;:]*$"
)


def in_people_list(text: str, start: int) -> bool:
    """Whether ``text[start:]`` stands in a list of people that a label opens, in the same
    clause ("Team: Farah, Bo, Porto" at "Farah" and at "Porto")."""
    return bool(_PEOPLE_LIST.search(text[max(0, start - 200) : start]))


def find_known_places(text: str) -> list[_Found]:
    """Capitalised names the gazetteer knows as a city or country, wherever they stand
    ("Need an itinerary: Kraków, leaving ..."), a little less sure than after a cue."""
    found = []
    for m in re.finditer(rf"(?<![\w@])(?P<place>{_PLACE})", text):
        if in_people_list(text, m.start()):
            continue
        place = _trim_name(m["place"].strip())
        words = place.split()
        # "Plan Malmö": a capitalised verb starts the sentence; the longest known run wins
        for size in range(len(words), 0, -1):
            run = next(
                (
                    (i, " ".join(words[i : i + size]))
                    for i in range(len(words) - size + 1)
                    if _is_name(" ".join(words[i : i + size]))
                    and places.is_known_place(" ".join(words[i : i + size]))
                ),
                None,
            )
            if run is not None and _names_an_organisation(words, run, text[m.end() :]):
                break  # "Riverside Book Club", "Boston Rowing Society": a name, not the place
            if run is not None:
                start = m.start() + len(" ".join(words[: run[0]])) + (1 if run[0] else 0)
                if not _opens_a_phrase(text, start, run[1]):
                    found.append(_Found(run[1], 0.6, start, start + len(run[1]), run[1]))
                break
    return found


# The head nouns of organisations' names: a known place that begins such a name ("Riverside
# Book Club") names the organisation, and says nothing of where the work happens.
_ORGANISATION_HEADS = frozenset(
    """club society association group company co ltd inc llc fc trust foundation federation
    union league choir orchestra partners""".split()  # noqa: SIM905 (a word list reads better)
)


def _names_an_organisation(words: Sequence[str], run: tuple[int, str], rest: str) -> bool:
    """Whether the name ends in an organisation's head noun, capitalised or not ("Riverside
    book club 10th birthday")."""
    after = words[run[0] + len(run[1].split()) :]
    if after and after[-1].casefold().strip(".") in _ORGANISATION_HEADS:
        return True
    following = re.match(r"\s+([a-z]+)(?:\s+([a-z]+))?", rest)  # "Riverside book club"
    return (
        not after
        and following is not None
        and any(w in _ORGANISATION_HEADS for w in following.groups() if w)
    )


# "Flights from Stansted", "leaving from Leeds Bradford", "the coach from Hull": a name after
# "from" that a way of travelling leads to is where the journey starts, never a person.
_TRAVEL_FROM = re.compile(
    r"(?i:\b(?:flights?|flying|fly|flies|leaving|leave|leaves|departing|departs?|departure|"
    r"trains?|coach(?:es)?|bus(?:es)?|ferr(?:y|ies)|driving|drive|travel(?:l?ing)?|setting off|"
    r"outbound|return(?:ing)?|transfers?|taxi|pick-?up|getting there)\b(?:[\s:,]+[\w'-]+){0,3}?\s+)"
    rf"(?i:from)\s+(?:the\s+)?(?P<place>{_PLACE})"
)


def find_origins(text: str) -> list[_Found]:
    """Where a journey starts: the place after "from" when a way of travelling leads to it
    ("flights from Stansted"), or a place the gazetteer knows after any "from"."""
    found: list[_Found] = []
    for m in _TRAVEL_FROM.finditer(text):
        place = _trim_name(m["place"].strip())
        if _is_name(place):
            found.append(_Found(place, 0.7, m.start("place"), m.start("place") + len(place), m[0]))
    for m in re.finditer(rf"\b(?i:from)\s+(?:the\s+)?(?P<place>{_PLACE})", text):
        place = _trim_name(m["place"].strip())
        if any(f.start == m.start("place") for f in found) or not _is_name(place):
            continue
        if places.is_known_place(place):
            end = m.start("place") + len(place)
            found.append(_Found(place, 0.6, m.start("place"), end, m[0]))
    found.sort(key=lambda f: f.start)
    return found


def find_people(text: str, spec: SlotSpec) -> list[_Found]:
    """Names after a cue ("with Ana and Ben Okafor") and @mentions, joined as a list. A name
    after "from" that is where a journey starts ("flights from Stansted") is no person."""
    cues = spec.cues or ("with",)
    name = rf"{_NAME_WORD}(?:\s+{_NAME_WORD})?"
    found: list[_Found] = []
    origins = {f.start for f in find_origins(text)} if "from" in cues else set()
    for m in re.finditer(
        rf"\b(?P<cue>(?i:{term_re(cues)}))\s+(?P<names>{name}(?:\s*(?:,|(?i:and)|&)\s*{name})*)",
        text,
    ):
        start = m.start("names")
        if m["cue"].casefold() == "from" and start in origins:
            continue
        if m["cue"].casefold() == "and":  # "Zoë and Søren": the list began before the cue
            before = re.search(
                rf"(?<![\w@])(?P<lead>{name}(?:\s*,\s*{name})*)\s+$", text[: m.start()]
            )
            if before is not None and _is_name(before["lead"]):
                start = before.start("lead")
        listed = text[start : m.end("names")]
        names = [n.strip() for n in re.split(r"\s*(?:,|\band\b|&)\s*", listed) if n.strip()]
        names = [_trim_name(n) for n in names if _is_name(n)]
        names = [n for n in names if n]
        if names:
            evidence = m[0] if start == m.start("names") else text[start : m.end()]
            found.append(_Found(", ".join(names), 0.7, start, m.end("names"), evidence))
    # "with the design team", "with our board": a group of people named by what it is
    for m in re.finditer(
        rf"\b(?i:{term_re(cues)})\s+(?P<group>(?i:the|our|my|their)\s+(?:[^\W\d_]+\s+){{0,2}}"
        r"(?i:team|group|committee|board|class|department|staff|crew|squad|panel|council|family))\b",
        text,
    ):
        if not any(f.start <= m.start("group") < f.end for f in found):
            found.append(_Found(m["group"], 0.6, m.start("group"), m.end("group"), m[0]))
    mentions = re.findall(r"(?<!\w)@([A-Za-z][\w.-]*)", text)
    if mentions:
        start = text.index("@" + mentions[0])
        found.append(_Found(", ".join(dict.fromkeys(mentions)), 0.8, start, start, "@"))
    found.sort(key=lambda f: f.start)
    return found


# Where a free-text value ends: a clause word, punctuation (not the point of "8.6"), the end.
# "in"/"at" before a capitalised name stay in the value ("café culture in Zürich"); so does
# "for" before the period the thing is for ("hiring plan for spring", "the roadmap for 2027").
_PERIOD = (
    r"(?:the\s+)?(?:spring|summer|autumn|fall|winter|q[1-4]|h[12]|\d{4}\b|next\s+(?:year|quarter)"
    r"|this\s+(?:year|quarter))"
)
_TEXT_STOP = (
    rf"(?=\s+(?:for(?!\s+{_PERIOD}(?:\s*(?:[,;:!?\n]|[.](?!\d)|$)|\s+(?:with|by|and|from)\b))|with|by|(?:in|at)(?!\s+(?-i:[{_UPPER}]))|from|before|after|next|this|that|which|"
    r"so|and then|due|starting|on\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|\d+|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b))"
    r"\b|[;:!?\n]|[.,](?!\d)|$)"
)


def find_free_text(text: str, spec: SlotSpec) -> list[_Found]:
    """The words after one of the slot's cues ("about X", "on X"), or after the slot's own name
    ("version 8.6"), up to a clause boundary."""
    own = [t for t in (spec.name.replace("_", " "), spec.label) if len(t) > 3]
    cues = [*spec.cues, *own]
    if not cues:
        return []
    spec = SlotSpec(name=spec.name, type=spec.type, cues=tuple(dict.fromkeys(cues)))
    found: list[_Found] = []
    pattern = re.compile(
        rf"\b(?:{term_re(spec.cues)})\s+(?P<v>(?:[^,.;:!?\n]|[.,](?=\d)){{2,80}}?){_TEXT_STOP}",
        re.IGNORECASE,
    )
    position = 0
    while (m := pattern.search(text, position)) is not None:
        value = m["v"].strip()
        first = value.split()[0].casefold() if value else ""
        named = any(m[0].casefold().startswith(t.casefold()) for t in own)
        if (
            value
            and first not in MONTHS
            and first not in WEEKDAYS
            and (named or not first[0].isdigit())
        ):
            found.append(_Found(value, 0.6, m.start("v"), m.end("v"), m[0]))
            position = m.end()
        else:  # "on 18 March to decide X": look again after the cue, not after the clause
            position = m.start("v")
    return found


_PARTICIPLE_CLAUSE = re.compile(
    r"(?:^|[,;:\u2014\u2013]\s*)(?P<verb>[^\W\d_]{3,}ing)\s+(?:(?:the|a|an|our|my|their)\s+)?"
    r"(?P<v>[^\W\d_][^,.;:!?\n\u2014\u2013]{1,60}?)\s*(?=[,.;:!?\n\u2014\u2013]|$)",
    re.IGNORECASE | re.MULTILINE,
)


def find_participle_clauses(text: str) -> list[_Found]:
    """Clauses of a list-like request led by a verb in -ing ("..., affecting the search
    cluster, ...") with no number in them: the thing the work is about, when one free-text slot
    is all that is left open (less sure than a cue: confidence 0.6)."""
    found = []
    for m in _PARTICIPLE_CLAUSE.finditer(text):
        value = m["v"].strip()
        if (
            re.search(r"\d", parse_numbers.digits_for_words(value))
            or re.search(r"(?i)\b(?:please|thanks?|you|me|i)\b", value)
            or parse_dates.find_dates(value, today=date.today())  # "shipping soon"
        ):
            continue
        found.append(_Found(value, 0.6, m.start("v"), m.end("v"), m[0].lstrip(",;: ")))
    return found


# "Nice to have: Power BI", "Split the bill", "Reading list", "Of the 28 students": a word
# that opens a sentence and runs on into a phrase is that word, not the town of its name.
_PHRASE_NEXT = frozenset(
    [
        *("to", "the", "a", "an", "it", "this", "that", "these", "those", "me", "us", "them"),
        *("our", "my", "your", "his", "her", "their", "list", "lists", "time", "up", "out"),
        *("off", "of"),
    ]
)
_SENTENCE_START = re.compile(r"(?:^|[\n.!?:;]\s*|^\s*(?:[-*+]|\d{1,2}[.)]|#+)\s*)$")
BIG_CITY = 1_000_000  # a city this big is the city even there ("Paris to Lyon by train")


def _opens_a_phrase(text: str, start: int, name: str) -> bool:
    if " " in name or not _SENTENCE_START.search(text[max(0, start - 40) : start]):
        return False
    after = re.match(r"\s+([a-z]+)\b", text[start + len(name) :])
    if after is None or after[1] not in _PHRASE_NEXT:
        return False
    readings = places.place_readings(name)
    return max((p.population for p in readings), default=0) < BIG_CITY
