"""What a situation finds wrong with its values: a numeric date read in the requester's date
order, conflicts between stated values (the request against the document, two places in the
document), and the values with several readings (a place several cities share, "03/04",
"next Friday", "a few").
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from datetime import date, timedelta

from agents.policies import parse_dates
from agents.policies.base import (
    Ambiguity,
    Conflict,
    SlotSource,
    SlotSpec,
    SlotState,
)
from agents.policies.places import place_readings
from agents.policies.situation_sources import (
    ANSWER_THRESHOLD,
    Candidate,
    comparable,
    display_value,
    same,
    slot_for_noun,
    vague_references,
)

# Two stated values conflict only when both readings are at least this sure.
CONFLICT_CONFIDENCE = 0.7


def reorder(candidate: Candidate, order: str, today: date) -> Candidate:
    found = parse_dates.numeric_dates(candidate.evidence)
    if not found:
        return candidate
    readings = parse_dates.numeric_date_readings(found[0][0], today=today)
    if len(readings) < 2:
        return candidate
    value = readings[0] if order == "dmy" else readings[1]
    source: SlotSource = "model" if candidate.source == "model" else candidate.source
    if candidate.source == "model" and candidate.where != "your memory":
        source = "request" if candidate.where in ("your message", "the goal") else "document"
        if candidate.where == "the chat":
            source = "chat"
    return Candidate(value, source, 0.85, candidate.where, candidate.evidence)


def _differ(spec: SlotSpec, a: str, b: str) -> bool:
    """Two readings that really disagree: for people, no name in common ("Priya, Tom" and
    "Priya" agree); free text is never a contradiction we can name."""
    if spec.type == "text" or same(a, b) or not comparable(a, b):
        return False
    if spec.type == "person":
        names = [{n.strip().casefold() for n in v.split(",") if n.strip()} for v in (a, b)]
        return not (names[0] & names[1])
    return True


_FUNCTION_WORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "of",
        "for",
        "on",
        "in",
        "at",
        "to",
        "and",
        "or",
        "with",
        "our",
        "my",
        "your",
        "their",
        "this",
        "that",
        "about",
        "de",
        "la",
        "le",
    ]
)


def _content_words(value: str) -> set[str]:
    return {w for w in re.findall(r"[^\W_]+", value.casefold()) if w not in _FUNCTION_WORDS}


def _text_conflict(spec: SlotSpec, found: Sequence[Candidate]) -> Conflict | None:
    """Free text and places: the request against a value the document labels ("Role: UX
    researcher"), when the two share no content word ("data analyst" vs "UX researcher"; "Q3
    roadmap" and "the Q3 roadmap review" agree)."""
    stated = [  # the request itself: a task's title ("Meeting brief for José") is no statement
        c
        for c in found
        if c.source == "request" and c.where == "your message" and c.confidence >= ANSWER_THRESHOLD
    ]
    labelled = [c for c in found if c.source == "document" and c.named and c.confidence >= 0.9]
    for a in stated:
        for b in labelled:
            words_a, words_b = _content_words(a.value), _content_words(b.value)
            if words_a and words_b and not words_a & words_b:
                return Conflict(slot=spec.name, values=((a.where, a.value), (b.where, b.value)))
    return None


def conflict(spec: SlotSpec, found: Sequence[Candidate]) -> Conflict | None:
    """The request (or goal) against the document, or two places in the document, stating
    different values. Memory and earlier chat lose to newer statements without a question."""
    if spec.type in ("text", "place"):
        return _text_conflict(spec, found)
    sure = [c for c in found if c.confidence >= CONFLICT_CONFIDENCE]
    stated = [c for c in sure if c.source == "request"]
    in_doc = [c for c in sure if c.source == "document" and c.named]
    if spec.type == "date" and len({c.value for c in stated + in_doc}) > 2:
        return None  # several dates are a schedule, not a contradiction
    pairs: list[tuple[Candidate, Candidate]] = []
    for a in stated:
        for b in in_doc:
            if _differ(spec, a.value, b.value):
                pairs.append((a, b))
    if not pairs and spec.type in ("money", "number") and len(in_doc) > 1:
        labelled = [c for c in in_doc if c.confidence >= 0.9]
        for a, b in itertools.pairwise(labelled):
            if _differ(spec, a.value, b.value):
                pairs.append((a, b))
    if not pairs:
        return None
    a, b = pairs[0]
    return Conflict(slot=spec.name, values=((a.where, a.value), (b.where, b.value)))


_VAGUE_COUNT = re.compile(
    r"(?i)\b(?:a\s+handful\s+of|a\s+few|several|a\s+couple\s+of|a\s+number\s+of|some|"
    r"a\s+bunch\s+of|lots\s+of|a\s+lot\s+of)\s+(?P<noun>[^\W\d_]+)"
)
_NEXT_WEEKDAY = re.compile(
    r"(?i)\bnext\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b"
)


def _next_weekday_readings(
    request: str, value: str, today: date
) -> tuple[str, tuple[str, str]] | None:
    """ "next Friday": the coming Friday or the one a week later (both readings are common)."""
    m = _NEXT_WEEKDAY.search(request)
    if m is None:
        return None
    try:
        coming = date.fromisoformat(value)
    except ValueError:
        return None
    later = coming - timedelta(days=7)
    if later > today:  # read as the one after this week's: offer both, nearest first
        coming = later
    return m[0], (coming.isoformat(), (coming + timedelta(days=7)).isoformat())


def ambiguities(
    specs: Sequence[SlotSpec],
    states: Mapping[str, SlotState],
    answered_by_card: set[str],
    remembered: Mapping[str, str],
    *,
    request: str,
    context_text: str,
    order: str | None,
    today: date,
) -> list[Ambiguity]:
    out: list[Ambiguity] = []
    for spec in specs:
        state = states.get(spec.name)
        if state is None or state.value is None or spec.name in answered_by_card:
            continue
        if spec.type == "place" and state.source != "memory":
            places = place_readings(state.value, context=context_text)
            if len(places) > 1:
                out.append(
                    Ambiguity(
                        slot=spec.name,
                        text=state.value,
                        readings=tuple(r.label for r in places[:4]),
                        reason="several cities share this name",
                    )
                )
        if spec.type == "date" and order is None:
            for written, _a, _b in parse_dates.numeric_dates(request):
                readings = parse_dates.numeric_date_readings(written, today=today)
                if len(readings) > 1 and state.value in readings:
                    out.append(
                        Ambiguity(
                            slot=spec.name,
                            text=written,
                            readings=tuple(display_value(r, spec) for r in readings),
                            reason="a numeric date read two ways",
                        )
                    )
                    break
        if spec.type == "date" and state.source == "request":
            reading = _next_weekday_readings(request, state.value, today)
            if reading:
                out.append(
                    Ambiguity(
                        slot=spec.name,
                        text=reading[0],
                        readings=tuple(display_value(r, spec) for r in reading[1]),
                        reason='"next" said of a day later this week',
                    )
                )
    for m in _VAGUE_COUNT.finditer(request):
        noun = m["noun"].casefold()
        counted = next(
            (s for s in specs if s.type == "number" and noun in {u.casefold() for u in s.units}),
            None,
        )
        state = states.get(counted.name) if counted else None
        if (
            counted is None
            or counted.name in answered_by_card
            or any(a.slot == counted.name for a in out)
        ):
            continue
        if state is not None and state.source == "request" and state.confidence >= 0.85:
            continue  # the request also gives the number
        out.append(Ambiguity(slot=counted.name, text=m[0], reason="a vague quantity"))
    for phrase, noun in vague_references(request):
        meant = slot_for_noun(noun, specs)
        if meant is None:
            continue  # "your usual spelling": not a value of this work
        name = meant.name
        if meant.name in remembered or meant.name in answered_by_card:
            continue  # memory (or an answer) says what "the usual" is
        if any(a.slot == name for a in out):
            continue
        out.append(Ambiguity(slot=name, text=phrase, reason="a reference I cannot resolve"))
    return out
