"""Where a situation's values come from, read before `build_situation` weighs them: whether
the request needs slots at all, the document's lines and the candidates they state, the
requester's memory facts (slot values, asking preference, date order), vague references ("the
usual place"), and the small helpers the situation and its conflicts share.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date

from agents.policies import parse_dates
from agents.policies.base import (
    AskPreference,
    SlotSource,
    SlotSpec,
)
from agents.policies.detect import detect, find_labelled
from agents.policies.memory_facts import MemoryFact

ANSWER_THRESHOLD = 0.5
DOCUMENT_SENTENCE_FACTOR = 0.9
# A date given only as a weekday or a relative word (no day number, no month).
_BARE_DAY = re.compile(
    r"(?i)^(?!.*\d)(?!.*\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b).*"
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun|to|yester)day\b"
)


@dataclass(frozen=True)
class Candidate:
    value: str
    source: SlotSource
    confidence: float
    where: str  # how a question names it: "your message", "the goal", "the document"
    evidence: str = ""
    # The text names the slot (a label, an alias, a unit): only then can it contradict.
    named: bool = True


# Aliases that are function words ("from", "until") do not name a slot in running text.
_WEAK_TERMS = frozenset({"from", "until", "back", "when", "day", "with", "for", "to", "in", "on"})


# After a count that opens its sentence, a verb saying what some of them get, need or are
# ("3 students get EAL support", "2 guests are vegetarian"): a part of the group, not its size.
_SUBSET_VERB = re.compile(
    r"(?i)^\s+(?:get|gets|need|needs|have|has|require|requires|receive|receives|use|uses|speak|"
    r"can(?:not|'t)?|will need|are (?:on|off|away|absent|allergic|vegetarian|vegan|new|not)|"
    r"leave|leaves|arrive|arrives|join late|do not|don't)\b"
)


def _subset_count(sentence: str, evidence: str) -> bool:
    start = sentence.find(evidence) if evidence else -1
    if start < 0:
        return False
    lead = sentence[:start].strip(" -*\u2022")
    if lead and not re.fullmatch(
        r"[^:\n]{1,40}:", lead
    ):  # "Lesson: 3 students get ...": its heading
        return False
    return bool(_SUBSET_VERB.match(sentence[start + len(evidence) :]))


def _names(text: str, spec: SlotSpec) -> bool:
    lowered = text.casefold()
    terms = [spec.name.replace("_", " "), spec.label, *spec.aliases, *spec.units]
    terms = [t for t in terms if t and t.casefold() not in _WEAK_TERMS]
    return any(re.search(rf"(?<!\w){re.escape(t.casefold())}(?!\w)", lowered) for t in terms if t)


# --- the request's intent ------------------------------------------------------------------

# Requests that need none of a template's values: they work on what is already there.
_NO_SLOTS = re.compile(
    r"(?i)\b(?:summari[sz]e|summary|sum\s+up|tl;?dr|recap|(?:suggest|propose|give|pick|choose|"
    r"find|come\s+up\s+with)\s+(?:me\s+)?(?:a\s+|some\s+|\d+\s+)?(?:better\s+|new\s+|catchy\s+)?"
    r"(?:title|name|headline|heading)s?|rename|retitle|what\s+(?:would\s+you\s+do|should\s+"
    r"(?:we|i)\s+do|do\s+you\s+(?:think|suggest|recommend))|what(?:'s|\s+is)?\s+next|next\s+steps?"
    r"|proofread|spell[-\s]?check|fix\s+(?:the\s+)?(?:typos|spelling|grammar)|translate|explain"
    r"|rephrase|reword|shorten|tighten|simplify|review|feedback|critique|check\s+(?:the|my|this)"
    r"|list\s+(?:the\s+)?(?:open\s+)?questions|what(?:'s|\s+is)\s+missing|outline\s+the\s+doc)"
)
# Requests that produce the work and so need its values.
_MAKES_WORK = re.compile(
    r"(?i)\b(?:plan|draft|write|create|make|prepare|build|organi[sz]e|book|schedule|put\s+together"
    r"|fill\s+in|complete|do\s+it|go\s+ahead|start)\b"
)


def request_needs_slots(request: str) -> bool:
    """False when the request works on what is there (summarise, suggest a title, what next,
    proofread, review): no template value blocks it. True otherwise."""
    return not (_NO_SLOTS.search(request) and not _MAKES_WORK.search(_NO_SLOTS.sub("", request)))


# --- the document --------------------------------------------------------------------------

_TABLE_SEPARATOR = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def document_lines(document: str) -> list[str]:
    """The document as lines a detector reads: emphasis dropped, each table row as
    "Header: cell" lines (or "first cell: second cell" without a header), and each heading
    followed by what is under it as "Heading: body"."""
    text = re.sub(r"(\*\*|__|`)", "", document.replace("\x00", ""))
    raw = text.splitlines()
    out: list[str] = []
    header: list[str] | None = None
    heading: str | None = None
    body: list[str] = []

    def close_section() -> None:
        if heading and body:
            items = [re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", b).strip() for b in body]
            items = [i for i in items if i]
            if items:
                out.append(f"{heading}: {', '.join(items) if len(items) > 1 else items[0]}")

    for index, line in enumerate(raw):
        stripped = line.strip()
        if stripped.startswith("|"):
            nxt = raw[index + 1] if index + 1 < len(raw) else ""
            if _TABLE_SEPARATOR.match(nxt):
                header = _cells(stripped)
                continue
            if _TABLE_SEPARATOR.match(stripped):
                continue
            cells = _cells(stripped)
            if header and len(header) == len(cells) and len(cells) > 2:
                out.extend(f"{h}: {c}" for h, c in zip(header, cells, strict=True) if h and c)
            elif len(cells) >= 2 and cells[0] and cells[1]:
                out.append(f"{cells[0]}: {cells[1]}")
            continue
        header = None
        m = re.match(r"^\s*#{1,6}\s+(.+?)\s*#*\s*$", line)
        if m:
            close_section()
            heading, body = m[1].rstrip(":").strip(), []
            out.append(m[1])
            continue
        if stripped:
            body.append(stripped)
            out.append(re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+", "", stripped))
    close_section()
    return out


# A sentence about another time ("Last year we went to Paris") states nothing about this task.
_PAST = re.compile(
    r"(?i)\b(?:last\s+(?:year|month|week|time|summer|winter|spring|autumn|fall)|previously"
    r"|in\s+the\s+past|years?\s+ago|used\s+to|we\s+(?:went|spent|had|did|visited|stayed)"
    r"|(?:went|spent|visited|stayed)\b)"
)


def _sentences(line: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", line) if s.strip()]


def _is_person(value: str, spec: SlotSpec, people: frozenset[str]) -> bool:
    return spec.type in ("text", "place") and value.casefold() in people


def document_candidates(
    document: str,
    specs: Sequence[SlotSpec],
    *,
    today: date,
    people: frozenset[str] = frozenset(),
    stated: frozenset[str] = frozenset(),
) -> dict[str, list[Candidate]]:
    """Every value the document states for each slot, surest first (labelled values, then
    sentences in document order). A weak reading (a weekday in passing) leaves the slot open to
    a later, surer sentence; the names of `people` are no free-text value; `stated` names the
    slots the request or chat already give (an unlabelled "Scope: X" line answers the one
    free-text slot still open)."""
    found: dict[str, list[Candidate]] = {}

    def sure(name: str) -> bool:
        return any(c.confidence >= ANSWER_THRESHOLD for c in found.get(name, ()))

    lines = document_lines(document)
    joined = "\n".join(lines)
    for spec in specs:
        for hit in find_labelled(joined, spec, today=today):
            found.setdefault(spec.name, []).append(
                Candidate(hit.value, "document", hit.confidence, "the document", hit.text)
            )
    for line in lines:
        for sentence in _sentences(line):
            if _PAST.search(sentence):
                continue
            open_specs = [s for s in specs if not sure(s.name)]
            for name, detection in detect(sentence, open_specs, today=today).items():
                spec = next(s for s in specs if s.name == name)
                if spec.type == "text" and detection.confidence < 0.6:
                    continue
                if _is_person(detection.value, spec, people):
                    continue
                named = _names(sentence, spec)
                confidence = detection.confidence * DOCUMENT_SENTENCE_FACTOR
                if spec.type == "number" and _subset_count(sentence, detection.evidence):
                    confidence = min(confidence, 0.45)  # "3 students get EAL support": some
                if spec.type == "date" and not named and _BARE_DAY.search(detection.evidence):
                    # "Notes from Monday": a weekday in passing dates the notes, not the work
                    confidence = min(confidence, 0.45)
                found.setdefault(name, []).append(
                    Candidate(
                        detection.value,
                        "document",
                        round(confidence, 3),
                        "the document",
                        detection.evidence,
                        named=named,
                    )
                )
    # A "Label: value" line no slot's label names ("Scope: climate change.") answers the one
    # required free-text slot (text, people, a place) still open, if there is exactly one.
    open_text = [
        s
        for s in specs
        if s.type in ("text", "person", "place")
        and s.required
        and not sure(s.name)
        and s.name not in stated  # the request already gives it
    ]
    if len(open_text) == 1:
        known = {
            t.casefold()
            for s in specs
            for t in (s.name.replace("_", " "), s.label, *s.aliases)
            if t
        }
        for line in lines:
            m = re.match(r"^\s*([A-Z][\w ]{1,24}):\s+(\S.{1,80})$", line)
            if m and m[1].strip().casefold() not in known and not m[2][0].isdigit():
                value = m[2].strip().rstrip(".")
                found[open_text[0].name] = [
                    Candidate(value, "document", 0.6, "the document", line, named=False)
                ]
                break
    return {name: sorted(found_, key=lambda c: -c.confidence) for name, found_ in found.items()}


def unlabelled_item(
    request: str,
    specs: Sequence[SlotSpec],
    *,
    today: date,
    stated: frozenset[str] = frozenset(),
    people: frozenset[str] = frozenset(),
) -> tuple[str, str] | None:
    """A terse request that lists its values after a colon ("Postmortem please: payments API,
    8 March 2027, SEV3, down twelve minutes"): when every item but one reads as another slot's
    value and exactly one required free-text slot (text, people, a place) is still open, the
    item left over is that slot's value. (slot name, value), or None."""
    listed = re.search(r":\s*(?P<items>[^:\n]+)$", request.strip())
    if listed is None:
        return None
    # items end at a semicolon or a comma before a space (not inside "CHF 1,500")
    parts = re.split(r"\s*(?:;|,(?=\s|$))\s*", listed["items"])
    items = [i.strip(" .!") for i in parts if re.search(r"[^\W\d_]", i)]
    open_slots = [
        s
        for s in specs
        if s.type in ("text", "person", "place") and s.required and s.name not in stated
    ]
    if len(items) < 3 or len(open_slots) != 1:
        return None
    others = [s for s in specs if s is not open_slots[0]]
    left = [
        item
        for item in items
        if not detect(item, others, today=today)
        and not re.search(r"(?i)\b(?:please|thanks?|thank you)\b", item)
        and item.casefold() not in people
    ]
    if len(left) != 1 or not 1 <= len(left[0].split()) <= 6:
        return None
    return open_slots[0].name, left[0]


# --- memory --------------------------------------------------------------------------------


_TITLE_SIDES = re.compile(r"\s*(?::|\s[\u2014\u2013-]\s)\s*")
_TITLE_FILLER = frozenset(
    {"a", "an", "the", "of", "for", "to", "and", "with", "on", "in", "at", "new"}
)
TITLE_CONFIDENCE = 0.7  # the title names what the task is about, in few words


def title_subject(title: str, generic: Iterable[str]) -> str:
    """What a task's title says the task is about, without the words any task of its kind
    has: "Year 9 — Introduction to climate change" gives "Introduction to climate change",
    "Blog post: our new search feature" gives "our new search feature"; a title of generic
    words ("Quarterly newsletter", "Team meeting"), ""."""
    given = " ".join(title.split())
    sides = _TITLE_SIDES.split(given, maxsplit=1)
    common = {w.casefold() for phrase in generic for w in phrase.split()}

    def telling_words(side: str) -> int:
        return sum(w not in _TITLE_FILLER | common for w in re.findall(r"[^\W_]+", side.casefold()))

    # "Job ad: data analyst": the side with more words of its own, the later one on a tie
    subject = max(reversed(sides), key=telling_words) if len(sides) == 2 else given
    words = subject.split()
    while words and re.sub(r"\W", "", words[-1].casefold()) in common:
        words.pop()  # "Climate change lesson": the kind's own word
    while words and re.sub(r"\W", "", words[0].casefold()) in common | _TITLE_FILLER:
        words.pop(0)
    subject = " ".join(words).strip(" ,.;:")
    telling = [
        w
        for w in re.findall(r"[^\W_]+", subject.casefold())
        if w not in _TITLE_FILLER and w not in common
    ]
    return subject if len(telling) >= 2 else ""


def memory_slot_values(facts: Iterable[MemoryFact]) -> dict[str, str]:
    """slot:<name> facts as slot -> value (the newest, last, wins)."""
    values: dict[str, str] = {}
    for fact in facts:
        if fact.slot_name and fact.value.strip():
            values[fact.slot_name] = fact.value.strip()
    return values


def asking_preference(facts: Iterable[MemoryFact]) -> tuple[AskPreference, int | None]:
    """The requester's "asking" fact: less | more | never | at_most:N (newest wins). Pass only
    the requester's own facts (`memory_facts.facts_for_requester`)."""
    preference: AskPreference = "normal"
    at_most: int | None = None
    for fact in facts:
        if fact.key != "asking":
            continue
        value = fact.value.strip().casefold()
        if value in ("less", "more", "never"):
            preference, at_most = value, None  # type: ignore[assignment]
        elif value.startswith("at_most:") and value[8:].strip().isdigit():
            preference, at_most = "normal", int(value[8:].strip())
            if at_most == 0:
                preference = "never"
        elif value in ("normal", "default"):
            preference, at_most = "normal", None
    return preference, at_most


def date_order(facts: Iterable[MemoryFact], texts: Iterable[str]) -> str | None:
    """How numeric dates are written here: "dmy", "mdy", or None (unknown). The requester's
    date_format fact wins; else a numeric date that can only be read one way ("25/03")."""
    for fact in facts:
        if fact.key == "date_format":
            if fact.value == "day_month_year":
                return "dmy"
            if fact.value == "month_day_year":
                return "mdy"
    for text in texts:
        for _written, a, b in parse_dates.numeric_dates(text):
            if a > 12 >= b:
                return "dmy"
            if b > 12 >= a:
                return "mdy"
    return None


# --- vague references ----------------------------------------------------------------------

_VAGUE = re.compile(
    r"(?i)\b(?:the|our|my|your)\s+usual\s+(?P<noun>[^\W\d_]+)"
    r"|\bsame\s+(?P<noun2>[^\W\d_]+)\s+as\s+(?:last\s+time|before|usual|always)"
    r"|\b(?:the|that)\s+(?P<noun3>place|room|venue|hotel|restaurant|spot|one)\s+(?:we|i)\s+"
    r"(?:used|had|went\s+to|always\s+use)(?:\s+last\s+time|\s+before)?"
)
_PLACE_NOUNS = {"room", "place", "venue", "spot", "hotel", "restaurant", "location", "office"}
_DATE_NOUNS = {"day", "date", "time", "slot", "week"}


def slot_for_noun(noun: str, specs: Sequence[SlotSpec]) -> SlotSpec | None:
    noun = noun.casefold().rstrip("s")
    for spec in specs:
        terms = {spec.name, spec.label, *spec.aliases, *spec.units}
        if any(noun == t.casefold().rstrip("s") for t in terms if t):
            return spec
    wanted = "place" if noun in _PLACE_NOUNS else "date" if noun in _DATE_NOUNS else None
    for spec in specs:
        if spec.type == wanted:
            return spec
    return None


def vague_references(text: str) -> list[tuple[str, str]]:
    """(phrase, noun) for each vague reference: "the usual room", "same hotel as last time"."""
    out = []
    for m in _VAGUE.finditer(text):
        noun = m["noun"] or m["noun2"] or m["noun3"]
        out.append((m[0], noun))
    return out


# --- helpers -------------------------------------------------------------------------------


def match_spec(name: str, specs: Sequence[SlotSpec]) -> SlotSpec | None:
    key = name.casefold().replace(" ", "_").replace("-", "_")
    for spec in specs:
        names = {spec.name, spec.label.casefold().replace(" ", "_")}
        names |= {a.casefold().replace(" ", "_") for a in spec.aliases}
        if key in names:
            return spec
    return None


def evidence_in(evidence: str, text: str) -> bool:
    squeeze = " ".join(evidence.casefold().split())
    return len(squeeze) >= 2 and squeeze in " ".join(text.casefold().split())


def same(a: str, b: str) -> bool:
    return " ".join(a.casefold().split()) == " ".join(b.casefold().split())


def comparable(a: str, b: str) -> bool:
    """Money in different currencies is not a contradiction we can name reliably."""
    ma, mb = re.match(r"^([A-Z]{3}) ", a), re.match(r"^([A-Z]{3}) ", b)
    return not (ma and mb and ma[1] != mb[1])


def _display(value: str, spec: SlotSpec) -> str:
    if spec.type == "date" and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        year, month, day = (int(x) for x in value.split("-"))
        return f"{day} {date(year, month, day).strftime('%B')}"
    if spec.type == "money":
        m = re.fullmatch(r"([A-Z]{3}) (.+)", value)
        if m:
            return f"{m[2]} {m[1]}"
    return value


def display_value(value: str, spec: SlotSpec) -> str:
    """A value as a question shows it ("2027-03-04" -> "4 March", "EUR 900" -> "900 EUR")."""
    return _display(value, spec)


def asked_before(specs: Sequence[SlotSpec], agent_messages: Sequence[str]) -> set[str]:
    asked = " ".join(" ".join(m.casefold().split()) for m in agent_messages)
    names = set()
    for spec in specs:
        question = " ".join(spec.question.casefold().split()).rstrip("?")
        named = re.escape(spec.display.casefold())
        if (question and question in asked) or re.search(rf"(?<!\w){named}\b[^?]*\?", asked):
            names.add(spec.name)
    return names
