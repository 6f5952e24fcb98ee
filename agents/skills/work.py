"""The skills: work the agent does from its understanding alone (pure Python, no Django).

Each skill takes ``TaskFacts`` (and, for lists, how many items were asked for) and returns a
``SkillAnswer``: the reply people read and, for ``draft``, a ``Suggestion`` (a change to the
document that the person accepts, edits or rejects). Every value in the text is one of the
facts' values, written as the person prefers (``write.py``); an open value is a visible
placeholder ("Venue: to decide"); an assumption is said as one. Checklists, risks and effort
come from the kind's data file, filtered by what is known and filled with it; for a task of no
known kind, from the goal's own clauses (``facts.parts``) and ``_generic.toml``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TypeVar

from agents.policies.situation_sources import title_subject
from agents.policies.templates import Line
from agents.skills.facts import OpenValue, TaskFacts, Value
from agents.skills.notes import carry_notes, note_lines, noted
from agents.skills.understand import starts_with_verb
from agents.skills.write import (
    PLACEHOLDER,
    and_list,
    as_list,
    finish,
    lower_first,
    say,
    sentence,
)

T = TypeVar("T")
TEXT_MAX = 1500  # what one reply or one suggestion may hold (agents/schemas.py)
FIND_MAX = 600


@dataclass(frozen=True)
class Suggestion:
    """A change to the document: ``find`` (exact text to replace; empty appends) -> ``replace``."""

    find: str
    replace: str


@dataclass(frozen=True)
class SkillAnswer:
    skill: str
    text: str
    suggestion: Suggestion | None = None


# --- values in running text -----------------------------------------------------------------


def phrase(value: Value, facts: TaskFacts) -> str:
    """A known value inside a sentence: "on Friday 12 June 2027", "a budget of 2,000 GBP",
    "25 people", "with Ana and Ben", "in Sintra"."""
    shown = say(value, facts.prefs)
    if value.type == "date":
        if value.label in ("deadline", "due date", "closing date", "decision date"):
            return f"due by {shown}"
        return f"in {shown}" if len(value.raw) == 7 else f"on {shown}"
    if value.type == "money":
        return f"a {value.label} of {shown}"
    if value.type == "number":
        return f"{shown} {value.unit or value.label}"
    if value.type == "person":
        return f"with {and_list([p.strip() for p in shown.split(',')])}"
    if value.type == "place":
        return f"from {shown}" if value.label == "origin" else f"in {shown}"
    if value.type == "choice":
        return f"{shown} ({value.label})"
    return f"{value.label} {shown}"


def labelled(value: Value, facts: TaskFacts) -> str:
    shown = say(value, facts.prefs)
    if value.type == "number" and value.unit:
        shown = f"{shown} {value.unit}"
    return f"{value.label[:1].upper()}{value.label[1:]}: {shown}"


def _open_line(item: OpenValue) -> str:
    return f"{item.label[:1].upper()}{item.label[1:]}: {PLACEHOLDER}"


def fill(text: str, facts: TaskFacts) -> str:
    """A kind's line with its ``{slot}`` placeholders filled: the known value, else a visible
    "to decide"."""

    def one(m: re.Match[str]) -> str:
        slot = m[1]
        value = facts.value(slot)
        if value is not None:
            shown = say(value, facts.prefs)
            after = text[m.end() :].lstrip().casefold()
            if value.type == "number" and value.unit and not after.startswith(value.unit):
                return f"{shown} {value.unit}"
            return shown
        spec = facts.kind.slot(slot) if facts.kind else None
        label = spec.display if spec else slot.replace("_", " ")
        return f"{label} {PLACEHOLDER}"

    return re.sub(r"\{([a-z][a-z0-9_]*)\}", one, text)


def _lines(lines: tuple[Line, ...], facts: TaskFacts) -> list[str]:
    known = {v.slot for v in facts.known}
    return [fill(line.text, facts) for line in lines if all(w in known for w in line.when)]


def _count(items: list[T], count: int | None) -> list[T]:
    return items[:count] if count else items


# --- draft ------------------------------------------------------------------------------------

_HEADING = re.compile(r"^\s*#{1,6}\s+(.+?)\s*#*\s*$")


def _headings(document: str) -> set[str]:
    return {m[1].casefold() for line in document.splitlines() if (m := _HEADING.match(line))}


def _only_headings(document: str) -> bool:
    lines = [line for line in document.splitlines() if line.strip()]
    return bool(lines) and all(_HEADING.match(line) for line in lines)


def _heading(title: str, facts: TaskFacts) -> str:
    return f"**{title}**" if facts.prefs.get("headings") == "no" else f"## {title}"


def _kind_sections(facts: TaskFacts) -> list[tuple[str, list[str]]]:
    assert facts.kind is not None
    sections: list[tuple[str, list[str]]] = []
    shown: set[str] = set()
    for section in facts.kind.sections:
        lines = []
        for slot in section.slots:
            shown.add(slot)
            value = facts.value(slot)
            if value is not None:
                lines.append(f"- {labelled(value, facts)}")
            else:
                item = next((o for o in facts.open if o.slot == slot), None)
                if item is not None and (item.required or item.readings):
                    lines.append(f"- {_open_line(item)}")
        if section.hint:
            lines.append(f"- _To write: {lower_first(section.hint).rstrip('.')}._")
        sections.append((section.title, lines))
    if not facts.kind.sections:  # a kind without sections: its skeleton's headings
        for line in facts.kind.skeleton.splitlines():
            m = _HEADING.match(line)
            if m:
                sections.append((m[1], [f"- _To write: {m[1].casefold()}._"]))
    return sections


def _generic_sections(facts: TaskFacts) -> list[tuple[str, list[str]]]:
    intro = []
    if facts.goal:
        intro.append(sentence(facts.goal.splitlines()[0]))
    notes = " ".join(note_lines(facts.document)).casefold()
    for value in facts.known:
        if not _said_in(value, notes):  # "- Stay: Airbnb in Ribeira, €540" says it already
            intro.append(f"- {labelled(value, facts)}")
    sections = [("Goal", intro)] if intro else []
    deadline = facts.deadline
    for part in facts.parts:
        lines = [
            f"- What is needed: {PLACEHOLDER}",
            f"- Owner: {PLACEHOLDER}",
            f"- Done by: {say(deadline, facts.prefs) if deadline else PLACEHOLDER}",
        ]
        sections.append((_cap(part), lines))
    return sections


def _said_in(value: Value, notes: str) -> bool:
    """Whether the document's notes (case folded) already say a place, a person or an amount
    (a date keeps its line: the draft adds its weekday)."""
    if value.type in ("place", "person"):
        return (
            bool(value.raw)
            and re.search(rf"(?<!\w){re.escape(value.raw.casefold())}", notes) is not None
        )
    if value.type == "money":
        number = value.raw.split()[-1].removesuffix(".0")
        return (
            re.search(
                rf"[£$€]\s?{re.escape(number)}(?![\d.])|(?<![\d.]){re.escape(number)}\s?(?:[£$€]|[a-z]{{3}}\b)",
                notes,
            )
            is not None
        )
    return False


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def draft(facts: TaskFacts) -> SkillAnswer:
    """A first version of the document, as a suggestion: the kind's sections (a task of no
    known kind: its goal and one section per part of it) with every known value in place and
    the open ones as "to decide", then the open decisions and the assumptions. A document
    that already has text is extended with the sections it lacks, never overwritten."""
    sections = _kind_sections(facts) if facts.kind else _generic_sections(facts)
    sections = carry_notes(sections, facts.document)
    open_items = [o for o in facts.open if o.required or o.readings]
    if open_items:
        sections.append(
            ("Open decisions", [f"- {_open_line(o)} ({o.question})" for o in open_items[:6]])
        )
    if facts.assumptions:
        sections.append(
            (
                "Assumptions",
                [
                    f"- {labelled(v, facts)}: say if another day is meant."
                    for v in facts.assumptions
                ],
            )
        )
    document = facts.document
    present = _headings(document)
    skeleton_only = _only_headings(document) and len(document) <= FIND_MAX
    if document.strip() and not skeleton_only:
        sections = [(t, lines) for t, lines in sections if t.casefold() not in present]
    blocks = [
        _heading(title, facts) + ("\n" + "\n".join(lines) if lines else "")
        for title, lines in sections
    ]
    text = "\n\n".join(blocks)
    if not document.strip() and facts.title and facts.prefs.get("headings") != "no":
        text = f"# {facts.title}\n\n{text}"
    while len(text) > TEXT_MAX - 2 and "_To write:" in text:  # hints go first
        text = re.sub(r"\n- _To write:[^\n]*", "", text, count=1)
    text = finish(text[: TEXT_MAX - 2].rstrip(), facts.prefs)
    if not sections:
        return SkillAnswer(
            "draft", "The document already has every section I would draft; nothing to add."
        )
    if skeleton_only:
        suggestion = Suggestion(find=document.strip(), replace=text)
        how = "fills in the document's sections"
    else:
        suggestion = Suggestion(find="", replace=("\n\n" if document.strip() else "") + text)
        how = "adds the sections the document lacks" if document.strip() else "is a first draft"
    said = [f"Here is a suggestion that {how}: accept, edit or reject it."]
    placeholders = [o.label for o in open_items[:4]]
    if facts.kind is None and facts.parts:
        placeholders = placeholders or ["what each part needs and who owns it"]
    if placeholders:
        said.append(f"Still to decide: {and_list(placeholders)}.")
    if facts.assumptions:
        said.append(
            "I assumed "
            + and_list([labelled(v, facts) for v in facts.assumptions])
            + "; say if that is wrong."
        )
    return SkillAnswer("draft", finish(" ".join(said), facts.prefs), suggestion)


# --- what is open -----------------------------------------------------------------------------


def _generic_open(facts: TaskFacts) -> list[OpenValue]:
    found: list[OpenValue] = []
    types = {v.type for v in facts.known}
    if "date" not in types:
        found.append(OpenValue("deadline", "deadline", "When must it be done?", weight=1.0))
    for part in facts.parts:
        found.append(
            OpenValue(
                "",
                lower_first(part),
                f"What exactly is needed {'to' if starts_with_verb(part) else 'for'} "
                f"{lower_first(part)}, and who owns it?",
                weight=0.8,
            )
        )
    if "person" not in types:
        found.append(OpenValue("people", "people", "Who is involved?", weight=0.6))
    if "money" not in types:
        found.append(OpenValue("budget", "budget", "Is there a budget?", weight=0.4))
    return found


_NEED = re.compile(r"(?i)\b(?:i|we)\s+(?:\w+\s+)?(?:need|needs|require)\b")


def chat_needs(chat: tuple[str, ...]) -> list[str]:
    """The chat's messages in which someone says what they need, as written."""
    return [" ".join(m.split()).rstrip(".") for m in chat if _NEED.search(m) and "?" not in m]


def open_items(facts: TaskFacts) -> list[OpenValue]:
    items = list(facts.open) if facts.kind else _generic_open(facts)
    return sorted(items, key=lambda o: -o.blocks)


def _question(item: OpenValue, facts: TaskFacts) -> str:
    text = item.question.rstrip()
    if item.readings:
        said = and_list(list(item.readings), "and as")
        return f"{_cap(item.label)}: it was given as {said}. Which one is right?"
    if item.choices:
        text += f" ({and_list(list(item.choices), 'or')})"
    return text


def open_questions(facts: TaskFacts, count: int | None = None) -> SkillAnswer:
    """The open and contested values, most blocking first, each as its question with the
    choices where the kind gives them."""
    items = open_items(facts)
    # What people left open in their own words ("mac or linux?", "venue TBD") comes first.
    said = [
        OpenValue("", note, note if "?" in note else f"{note}: still open?", weight=1.5)
        for note in noted(facts.document, facts.chat, "open")
    ]
    # What someone said they need ("I need a discrete GPU for the computer-vision work").
    needs = [
        OpenValue("", note, f"“{note}” was said in the chat: is it covered?", weight=1.4)
        for note in chat_needs(facts.chat)
        if not any(note in o.label for o in said)
    ]
    items = [*said, *needs, *items]
    required = [o for o in items if o.required or o.readings]
    wanted = count or 3  # a list of one is no list: the less blocking ones follow
    extra = [o for o in items if o not in required][: max(0, wanted - len(required))]
    shown = _count([*required, *extra] if required else items, count)
    if not required:
        known = and_list([phrase(v, facts) for v in facts.known[:4]])
        text = "Nothing the work needs is open"
        text += f": I have {known}." if known else "."
        if shown:
            text += "\nAlso open, if it matters:\n" + as_list(
                [_question(o, facts) for o in shown], facts.prefs, ordered=True
            )
        return SkillAnswer("open_questions", finish(text, facts.prefs))
    lead = "What is still open, most blocking first:"
    if count and count < len(required or items):
        lead = f"The {count} most blocking open {'question' if count == 1 else 'questions'}:"
    body = as_list([_question(o, facts) for o in shown], facts.prefs, ordered=True)
    return SkillAnswer("open_questions", finish(f"{lead}\n{body}", facts.prefs))


def decide_first(facts: TaskFacts) -> SkillAnswer:
    items = [o for o in open_items(facts) if o.required or o.readings] or open_items(facts)
    if not items:
        return SkillAnswer(
            "decide_first", finish("Nothing is left to decide: ask me for a draft.", facts.prefs)
        )
    top = items[0]
    text = f"Decide the {top.label} first: {_question(top, facts)}"
    text = sentence(text) if not text.endswith("?") else text
    if len(items) > 1:
        text += f" Then: {and_list([o.label for o in items[1:3]])}."
    return SkillAnswer("decide_first", finish(text, facts.prefs))


# --- summary, title, rephrasing ---------------------------------------------------------------


def _goal_sentence(facts: TaskFacts) -> str:
    first = re.split(r"(?<=[.!?])\s+|\n", facts.goal.strip())[0] if facts.goal else ""
    return first.rstrip(".!? ")


def _goal_phrase(facts: TaskFacts) -> str:
    if facts.kind is None and facts.parts:
        return and_list(list(facts.parts))
    return lower_first(_goal_sentence(facts)) or lower_first(facts.title)


def _not_in(values: list[Value], text: str, facts: TaskFacts) -> list[Value]:
    """The values the text does not already say (by their words or their reading)."""
    lowered = text.casefold()
    out = []
    for v in values:
        forms = [v.raw, v.evidence, say(v, facts.prefs).split(" (")[0]]
        if v.type == "date" and len(v.raw) == 10:
            words = say(v, {}).split()  # "Friday 12 June 2027"
            forms += [f"{words[1]} {words[2]}", f"{words[2]} {words[1]}"]
        if v.type == "money":
            forms.append(v.raw.split()[-1])
        if v.type == "person":
            forms.append(v.raw.split(",")[0].strip())
        if not any(f and f.casefold() in lowered for f in forms):
            out.append(v)
    return out


def still_open(facts: TaskFacts) -> list[str]:
    if facts.kind is None:
        labels = ["who owns each part"] if facts.parts else []
        return labels + [o.label for o in _generic_open(facts) if o.slot != ""][:2]
    return [o.label for o in open_items(facts) if o.required or o.readings][:3]


def summary(facts: TaskFacts, *, one_line: bool = False) -> SkillAnswer:
    """What the task is, what is known and what is open, in whole sentences (one with
    ``one_line``)."""
    still = still_open(facts)
    name = facts.title or "This task"
    about = _goal_phrase(facts)
    first = f"{name}: {about}" if about and about.casefold() != name.casefold() else name
    new = _not_in(list(facts.known), first, facts)
    new += [v for v in facts.known if v.assumed and v not in new]
    known = [phrase(v, facts) for v in new[:5]]
    if one_line:
        text = first + (f", {and_list(known)}" if known else "")
        text += f"; still open: {and_list(still)}." if still else "."
        return SkillAnswer("summary", finish(sentence(text), facts.prefs))
    said = [sentence(first)]
    if known:
        said.append(sentence(f"Known so far: {and_list(known)}"))
    if still:
        said.append(sentence(f"Still open: {and_list(still)}"))
    return SkillAnswer("summary", finish(" ".join(said), facts.prefs))


MAX_TITLE_WORDS = 8


def _short(text: str, words: int) -> str:
    kept = text.split()[:words]
    while kept and kept[-1].casefold() in {"for", "and", "the", "a", "of", "to", "with", "in"}:
        kept.pop()
    return " ".join(kept)


def _title_subject(facts: TaskFacts) -> str:
    """What the task's own title says it is about, without its kind's generic words
    (``title_subject``): "Job ad: junior backend developer" gives "junior backend developer"."""
    return title_subject(facts.title, facts.kind.title.split() if facts.kind else ())


def title(facts: TaskFacts) -> SkillAnswer:
    """A short title from the task's own words and its most telling value (a place or a
    date)."""
    core = _title_subject(facts) or (facts.parts[0] if facts.parts else facts.goal)
    core = core.strip().rstrip(".")
    pieces = re.split(r"\s+(?:for|with|on|by|to|from|at)\s+", core)
    generic_words = {w.casefold() for w in (facts.kind.title.split() if facts.kind else [])}
    generic_words |= {"brief", "plan", "document", "draft", "a", "the"}
    if len(pieces) > 1 and set(pieces[0].casefold().split()) <= generic_words:
        core = pieces[1]  # "Meeting brief for Friday's planning meeting": what it is about
    elif len(core.split()) > 6:
        core = pieces[0]
    core = _short(core, 7) or _short(facts.title, 6)
    extra = ""
    place = next((v for v in facts.of_type("place") if v.label != "origin"), None)
    when = facts.deadline
    if place is not None and place.raw.casefold() not in core.casefold():
        extra = f" in {place.raw}"
    elif when is not None and not when.assumed and when.label != "deadline":
        extra = ", " + " ".join(say(when, facts.prefs).split(" (")[0].split()[-3:])
    text = (core[:1].upper() + core[1:] + extra).strip()
    return SkillAnswer("title", finish(f"Suggested title: “{text}”", facts.prefs))


def rephrase(facts: TaskFacts) -> SkillAnswer:
    """The goal again in whole sentences that name its facts."""
    about = _goal_phrase(facts)
    said = [sentence(f"The goal: {about}")]
    known = [phrase(v, facts) for v in _not_in(list(facts.known), about, facts)[:5]]
    if known:
        said.append(sentence(f"It is {and_list(known)}"))
    still = still_open(facts)
    if still:
        said.append(sentence(f"We still need to decide {and_list(still)}"))
    return SkillAnswer("rephrase", finish(" ".join(said), facts.prefs))
