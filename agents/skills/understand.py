"""``TaskFacts`` from a turn's context (the mapping ``agents/context.py`` builds and the turn
stores), through the policies' own understanding (``agents/policies``): the situation's
answered values for the task's kind, the goal's own clauses and, for a task of no known kind,
every date, amount, person and place its texts state. Pure Python, no Django.

The task's title and goal count as stated: a value they give is known, never asked for.
A date read from a weekday or a relative phrase ("Friday", "next week") is an assumption.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import Any

from agents.policies import parse_dates, parse_money, places
from agents.policies.adapter import request_and_chat, requester_facts, situation_from_context
from agents.policies.base import Situation, SlotSpec
from agents.policies.detect_names import (
    find_known_places,
    find_origins,
    find_people,
    in_people_list,
)
from agents.policies.detect_words import owned_elsewhere
from agents.policies.style import preferences
from agents.policies.templates import TaskTemplate, load_templates
from agents.skills.facts import MONTHS, OpenValue, TaskFacts, Value

# The first keywords of a kind name it plainly; the rest only support a guess (as the policy's
# ``guess_template``, but over every kind: the skills use the kinds the policy does not guess).
HEAD_KEYWORDS = 3


def guess_kind(text: str) -> TaskTemplate | None:
    lowered = text.casefold()
    best: tuple[int, str] | None = None
    for template in load_templates().values():
        hit = [k for k in template.keywords if re.search(rf"(?<!\w){re.escape(k)}(?!\w)", lowered)]
        head = any(k in hit for k in template.keywords[:HEAD_KEYWORDS])
        if not (head or len(hit) >= 2):
            continue
        score = len(hit) + (1 if head else 0) + (1 if template.guess else 0)
        if best is None or score > best[0]:
            best = (score, template.kind)
    return None if best is None else load_templates()[best[1]]


def kind_for(context: Mapping[str, Any]) -> TaskTemplate | None:
    task = context.get("task") or {}
    kind = str(task.get("template") or "")
    if kind in load_templates():
        return load_templates()[kind]
    return guess_kind(" ".join(str(task.get(k) or "") for k in ("title", "goal")))


# --- dates: stated or assumed --------------------------------------------------------------

_MONTH_WORDS = "|".join(m[:3] for m in MONTHS)


def _absolute(raw: str, texts: str) -> bool:
    """Whether the texts write this date out (a month name with its day, or the digits), not
    only as a weekday or a relative phrase."""
    m = re.fullmatch(r"(\d{4})-(\d{2})(?:-(\d{2}))?", raw)
    if m is None:
        return True
    month = MONTHS[int(m[2]) - 1][:3]
    if m[3] is None:
        return bool(re.search(rf"(?i)\b{month}", texts)) or bool(re.search(rf"\b{m[1]}\b", texts))
    day = str(int(m[3]))
    patterns = [
        rf"(?i)\b{day}(?:st|nd|rd|th)?\s+(?:of\s+)?{month}",
        rf"(?i)\b{month}[a-z]*\.?\s+{day}(?:st|nd|rd|th)?\b",
        rf"\b{m[1]}-{m[2]}-{m[3]}\b",
        rf"\b0?{day}[/.]0?{int(m[2])}\b",
        rf"\b0?{int(m[2])}[/.]0?{day}\b",
        # the first day of a range: "10-13 Sept", "Sept 10-13"
        rf"(?i)\b{day}(?:st|nd|rd|th)?\s*(?:-|\u2013|to|until)\s*\d{{1,2}}(?:st|nd|rd|th)?\s+"
        rf"(?:of\s+)?{month}",
    ]
    return any(re.search(p, texts) for p in patterns)


def _evidence(raw: str, texts: Sequence[str], today: date) -> str:
    for text in texts:
        for found in parse_dates.find_dates(text, today=today):
            if found.value == raw:
                return " ".join(found.text.split())
    return ""


# --- the goal's own parts (the generic kind) ------------------------------------------------

# The verbs that open a piece of work ("get new laptops", "set up a calendar").
_WORK_VERBS = (
    r"get|set\s+up|sort\s+out|organi[sz]e|arrange|prepare|plan|buy|order|roll\s+out|introduce|"
    r"provide|deliver|create|make|write|draft|build|find|book|choose|pick|run|hold|launch|start|"
    r"finish|fix|update|replace|move|hire|recruit|install|review"
)
_LEAD_VERB = re.compile(
    r"(?i)^\s*(?:(?:we|i)\s+(?:need|want|have)\s+to\s+|(?:we|i)\s+need\s+|please\s+|let'?s\s+)?"
    rf"(?:{_WORK_VERBS}|put\s+together|set|do)\b\s*"
)
_PART_VERB = re.compile(
    rf"(?i)^(?:{_WORK_VERBS}|decide|agree|confirm|check|send|collect|share|invite|train|test|"
    r"migrate|publish|schedule|compare|contact|ask|tell|announce|clean|pack|print|sign|pay|"
    r"cancel|renew)\b"
)
# A part that points back at the task ("write it for members") names no thing of its own.
_PRONOUN_LED = re.compile(r"(?i)^(?:it|this|that|them|these|those)\b")


def starts_with_verb(part: str) -> bool:
    """Whether a goal part is an action ("decide whether to rent") rather than a thing ("new
    laptops"), so a question about it reads "needed to decide", not "needed for decide"."""
    return bool(_PART_VERB.match(part.strip()))


_DEADLINE_TAIL = re.compile(
    r"(?i)\s*,?\s*\b(?:by|before|until|no later than|due(?:\s+by)?|ahead of)\s+(?P<when>[^,;]+)$"
)
_SPLIT = re.compile(
    r"\s*(?:;|,(?!\d)|\band\s+(?:also\s+)?|\bplus\b|\bas well as\b)\s*", re.IGNORECASE
)
_ARTICLE = re.compile(r"(?i)^(?:a|an|the|some|our|my)\s+")
MAX_PARTS = 6
# Words that leave a clause a value, not a part of the work ("budget €14,000 total").
_VALUE_WORDS = re.compile(
    r"(?i)\b(?:budget|total|max(?:imum)?|min(?:imum)?|at (?:least|most)|up to|about|around|"
    r"roughly|cost|costs|in all|from|to|until|on|at|by|before|and|we|us|are|is|will|be|there|"
    r"people|persons|guests|attendees|participants)\b"
)
_TIMES = re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.|h)?\b", re.IGNORECASE)


def _without_values(piece: str, today: date) -> tuple[str, bool]:
    """``piece`` with its dates, amounts and numbers taken out, and whether it held any: "8
    laptops for the data team by 30 April 2027" gives "8 laptops for the data team"; "budget
    €14,000 total" gives ("", True)."""
    found = [(d.start, d.end) for d in parse_dates.find_dates(piece, today=today)]
    found += [(m.start, m.end) for m in parse_money.find_money(piece)]
    kept = piece
    for start, end in sorted(found, reverse=True):
        year = re.match(r",?\s*\d{4}\b", kept[end:])  # "17 April" read, "2027" after it
        end += year.end() if year else 0
        before = re.search(r"(?i)\b(?:by|before|until|on|due)\s+$", kept[:start])
        kept = kept[: before.start() if before else start] + kept[end:]
    rest = _VALUE_WORDS.sub(" ", _TIMES.sub(" ", kept))
    had = bool(found) or bool(re.search(r"\d", piece))
    words = re.findall(r"[^\W\d_]{3,}", rest)
    if had and len(words) <= 1:
        return "", True
    return " ".join(kept.split()).strip(" ,;-\u2013"), had


def goal_parts(goal: str, *, today: date) -> tuple[str, ...]:
    """The goal's own clauses: "new laptops for the support team, a shared calendar and a short
    training by June" gives ("New laptops for the support team", "Shared calendar", "Short
    training"); the deadline at its end is left to the values."""
    first = re.split(r"(?<=[.!?])\s+|\n", goal.strip())[0].strip().rstrip(".!?")
    if not first:
        return ()
    tail = _DEADLINE_TAIL.search(first)
    if tail is not None and parse_dates.find_dates(tail["when"], today=today):
        first = first[: tail.start()]
    stripped = _LEAD_VERB.sub("", first, count=1)
    parts = []
    for index, piece in enumerate(_SPLIT.split(stripped)):
        piece = _ARTICLE.sub("", piece.strip(" -\u2013:.")).strip()
        piece = _without_values(piece, today)[0]
        if len(piece) < 3 or not re.search(r"[^\W\d_]{3}", piece):
            continue
        if _PRONOUN_LED.match(piece) or (len(piece.split()) == 1 and starts_with_verb(piece)):
            continue  # "it for members", a bare "send": the task's own title says what
        if index == 0 and stripped == first and len(piece) > 1 and not piece[1].isupper():
            piece = piece[0].lower() + piece[1:]  # the sentence's capital, not a name's
        parts.append(piece)
    return tuple(dict.fromkeys(parts))[:MAX_PARTS]


# --- values a free-form task states ---------------------------------------------------------

_BUDGET_SPEC = SlotSpec(name="budget", type="money", aliases=("spend", "spending", "cap"))
_PEOPLE_SPEC = SlotSpec(name="people", type="person", cues=("with", "for", "and", "by", "from"))
_BY = re.compile(r"(?i)\b(?:by|before|until|due|deadline)\W+(?:\w+\W+){0,2}$")


def _free_values(texts: Sequence[tuple[str, str]], today: date) -> list[Value]:
    out: list[Value] = []
    seen: set[tuple[str, str]] = set()

    def add(value: Value) -> None:
        if (value.type, value.raw) not in seen:
            seen.add((value.type, value.raw))
            out.append(value)

    # "flights from Stansted": where the trip starts, and so nobody's name anywhere in the task
    origins = {f.value for _, text in texts for f in find_origins(text)}
    for source, text in texts:
        for found in parse_dates.find_dates(text, today=today):
            before = text[max(0, found.start - 24) : found.start]
            by = _BY.search(before) or re.match(r"(?i)(?:by|before|until|due)\b", found.text)
            label = "deadline" if by else "date"
            add(Value(label, found.value, "date", source, evidence=" ".join(found.text.split())))
        for found in parse_money.find_money(text):
            # "Budget: £600", "we have £500": the budget; "Van: Hire-A-Van, £145": a cost
            label = "cost" if owned_elsewhere(text, found.start, _BUDGET_SPEC) else "budget"
            add(Value(label, found.value, "money", source))
        for found in find_origins(text):
            add(Value("origin", found.value, "place", source, evidence=found.text))
        for found in find_people(text, _PEOPLE_SPEC):
            names = [n.strip() for n in found.value.split(",")]
            if all(n in origins for n in names):
                continue
            if found.text != "@" and found.value[:1].isupper():
                add(Value("people", found.value, "person", source))
        for found in find_known_places(text):
            if _reads_as_place(text, found.start, found.value):
                add(Value("place", found.value, "place", source))
    return out


_PLACE_CUE = re.compile(
    r"(?i)(?:\b(?:in|at|to|from|near|via|around|visit(?:ing)?|leaving|flying from)\s+|"
    r"\b(?:location|destination|city|venue|place|where|office)\s*:\s*)$"
)
BIG_PLACE = 100_000  # a known city this large is a place even without "in" or "at" before it


def _reads_as_place(text: str, start: int, name: str) -> bool:
    """A name the gazetteer knows is a place of the task when a cue stands before it ("in
    Porto", "Location: Ghent") or it is a large city outside a list of people ("Buy laptops",
    "Team: Farah, Bo" are no places)."""
    if in_people_list(text, start):
        return False
    if _PLACE_CUE.search(text[max(0, start - 24) : start]):
        return True
    readings = places.place_readings(name)
    return bool(readings) and readings[0].population >= BIG_PLACE


# --- all together ---------------------------------------------------------------------------

_SOURCE = {"request": "request", "chat": "chat", "document": "document", "memory": "memory"}


def facts_from_situation(
    situation: Situation,
    *,
    title: str,
    goal: str,
    today: date,
    request: str = "",
    document: str = "",
    chat: Sequence[str] = (),
    kind: TaskTemplate | None = None,
    prefs: Mapping[str, str] | None = None,
) -> TaskFacts:
    """``TaskFacts`` from a policy ``Situation`` and the texts it was read from."""
    texts = [("request", title), ("request", goal), ("request", request)]
    texts += [("chat", m) for m in chat] + [("document", document)]
    stated = "\n".join(t for _, t in texts if t)
    unsure = {c.slot for c in situation.conflicts} | {a.slot for a in situation.ambiguities}
    readings: dict[str, tuple[str, ...]] = {
        c.slot: tuple(dict.fromkeys(str(value) for _, value in c.values))
        for c in situation.conflicts
    }
    for ambiguity in situation.ambiguities:
        readings.setdefault(ambiguity.slot, tuple(ambiguity.readings))
    known: list[Value] = []
    still_open: list[OpenValue] = []
    for state in situation.slots:
        spec = state.spec
        if state.answered and state.name not in unsure and state.value:
            raw = str(state.value)
            assumed = spec.type == "date" and not _absolute(raw, stated)
            evidence = _evidence(raw, [t for _, t in texts], today) if assumed else ""
            known.append(
                Value(
                    spec.display,
                    raw,
                    spec.type,
                    _SOURCE.get(str(state.source), "request"),
                    slot=spec.name,
                    assumed=assumed,
                    evidence=evidence,
                    unit=spec.units[0] if spec.units else "",
                )
            )
        elif kind is not None:
            still_open.append(
                OpenValue(
                    slot=spec.name,
                    label=spec.display,
                    question=spec.question or f"What is the {spec.display}?",
                    choices=spec.choices,
                    weight=spec.weight,
                    required=spec.required or state.name in unsure,
                    readings=readings.get(state.name, ()),
                )
            )
    if kind is None:
        known = _free_values(texts, today)
        for value in known:
            if value.type == "date" and not _absolute(value.raw, stated):
                known[known.index(value)] = Value(
                    value.label,
                    value.raw,
                    value.type,
                    value.source,
                    assumed=True,
                    evidence=value.evidence,
                )
    people: list[str] = []
    for value in known:
        if value.type == "person":
            people += [p.strip() for p in value.raw.split(",") if p.strip()]
    still_open.sort(key=lambda o: -o.blocks)
    return TaskFacts(
        title=title.strip(),
        goal=goal.strip(),
        today=today,
        request=request,
        document=document,
        kind=kind,
        known=tuple(known),
        open=tuple(still_open),
        parts=goal_parts(goal, today=today) or goal_parts(title, today=today),
        people=tuple(dict.fromkeys(people)),
        prefs=dict(prefs or {}),
        stated=stated,
    )


_MENTION = re.compile(r"(?<!\w)@[\w.-]+[,:]?\s*")


def without_mentions(context: Mapping[str, Any]) -> dict[str, Any]:
    """The context with the @mentions taken out of the request and the chat: "@Assistant draft
    it" names who is asked, not who organises the work."""
    out = dict(context)
    out["request"] = _MENTION.sub("", str(context.get("request") or "")).strip()
    out["messages"] = [
        {**m, "body": _MENTION.sub("", str(m.get("body") or "")).strip()}
        for m in context.get("messages", ())
    ]
    return out


_WEEKDAY_OR_RELATIVE = re.compile(
    r"(?i)\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|next week)\b"
)


def assumed_dates(facts: TaskFacts) -> TaskFacts:
    """A required date nobody gave, when the title, goal or request names a weekday ("Friday's
    meeting"): that day, as an assumption, said as one."""
    if facts.kind is None:
        return facts
    for item in facts.open:
        spec = facts.kind.slot(item.slot)
        if spec is None or spec.type != "date" or not item.required or item.readings:
            continue
        for text in (facts.title, facts.goal, facts.request):
            m = _WEEKDAY_OR_RELATIVE.search(text)
            found = parse_dates.find_dates(m[0], today=facts.today) if m else []
            if m and found:
                value = Value(
                    spec.display,
                    found[0].value,
                    "date",
                    "request",
                    slot=spec.name,
                    assumed=True,
                    evidence=m[0],
                )
                return replace(
                    facts,
                    known=(*facts.known, value),
                    open=tuple(o for o in facts.open if o is not item),
                )
        break
    return facts


def facts_from_context(
    context: Mapping[str, Any], *, prefs: Mapping[str, str] | None = None
) -> TaskFacts:
    """``TaskFacts`` for a turn's context: its kind (the task's template, else one its title and
    goal name), read by the policies' situation; ``prefs`` (else the requester's preference
    facts in the context)."""
    # Earlier requests of an agent ("@Assistant what does it cost each?") are not the task's
    # notes: the chat the skills quote and list holds what people said to each other.
    addressed = {
        _MENTION.sub("", str(m.get("body") or "")).strip()
        for m in context.get("messages", ())
        if re.match(r"\s*@[\w.-]+", str(m.get("body") or ""))
    }
    context = without_mentions(context)
    kind = kind_for(context)
    situation = situation_from_context(context, template_kind=kind.kind if kind else None)
    task = context.get("task") or {}
    request, chat, later = request_and_chat(context)
    try:
        today = date.fromisoformat(str(context.get("request_date") or ""))
    except ValueError:
        today = date.today()
    if prefs is None:
        prefs = preferences(requester_facts(context, kind))
    agent = str(context.get("agent") or "").casefold()
    facts = facts_from_situation(
        situation,
        title=str(task.get("title") or ""),
        goal=str(task.get("goal") or ""),
        today=today,
        request=request,
        document=str(context.get("document") or ""),
        chat=[*chat, *later],
        kind=kind,
        prefs=prefs,
    )
    if agent:
        facts = replace(facts, known=tuple(v for v in facts.known if v.raw.casefold() != agent))
    # Every human message but the request, for quoted answers (``request_and_chat`` takes the
    # newest one for the request when the context carries none).
    asked = str(context.get("request") or "").strip()
    said = [
        str(m.get("body") or "")
        for m in context.get("messages", ())
        if m.get("kind", "human") == "human"
        and str(m.get("body") or "").strip() not in {asked, *addressed}
    ]
    return assumed_dates(replace(facts, chat=tuple(said)))
