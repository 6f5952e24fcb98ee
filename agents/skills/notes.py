"""The notes a document already holds, carried into a draft (pure Python, no Django).

A task's document often starts as notes ("Location: Ghent, hybrid", "Must-dos: tram 28, one
beach day"). A draft that adds the kind's sections but leaves those out is a form, not a first
version: each note line goes under the draft's section it shares most words with (the first
section when none), said as it was written; nothing is reworded, so nothing is invented.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agents.skills.quote import content_words

_BULLET = re.compile(r"^\s*(?:[-*+]|\d{1,2}[.)]|\[[ xX]\])\s*")
_HEADING = re.compile(r"^\s*#{1,6}\s")
MAX_NOTES = 14  # lines carried over at most (a suggestion holds 1,500 characters)


def note_lines(document: str) -> list[str]:
    """The document's lines that say something (not headings, not one or two words), as
    written, without their bullet."""
    out: list[str] = []
    for raw in document.splitlines():
        if not raw.strip() or _HEADING.match(raw):
            continue
        line = _BULLET.sub("", raw).strip()
        if len(line.split()) >= 2 and len(line) <= 200:
            out.append(line)
    return list(dict.fromkeys(out))[:MAX_NOTES]


def carry_notes(
    sections: Sequence[tuple[str, list[str]]], document: str
) -> list[tuple[str, list[str]]]:
    """``sections`` with each of the document's note lines under the section it fits best (the
    first one when it fits none); a note a section already says is not repeated."""
    out = [(title, list(lines)) for title, lines in sections]
    if not out:
        return out
    words = [content_words(f"{title} {' '.join(lines)}") for title, lines in out]
    carried: set[str] = set()
    for note in note_lines(document):
        said = note.casefold()
        if any(said in line.casefold() for _, lines in out for line in lines):
            continue
        if _replaces_a_value(out, note, carried):
            continue
        mine = content_words(note)
        best = max(range(len(out)), key=lambda i: (len(mine & words[i]), -i))
        out[best][1].insert(_after_values(out[best][1]), f"- {note}")
        carried.add(f"- {note}")
    return out


def _replaces_a_value(sections: list[tuple[str, list[str]]], note: str, carried: set[str]) -> bool:
    """A note "Budget: €3,200 total" takes the place of the draft's own "- Budget: 3,200 EUR"
    line: the person's words say it, and say it better than a reading of them."""
    label = re.match(r"^([^:]{2,30}):\s*\S", note)
    if label is None:
        return False
    lead = f"- {label[1].strip().casefold()}:"
    for _, lines in sections:
        for i, line in enumerate(lines):
            if line.casefold().startswith(lead) and line not in carried:
                lines[i] = f"- {note}"
                carried.add(lines[i])
                return True
    return False


def _after_values(lines: list[str]) -> int:
    """Where a note goes in a section: after its values, before its hints and open values."""
    for i, line in enumerate(lines):
        if "_To write:" in line or "to decide" in line.casefold():
            return i
    return len(lines)


# What makes a note a to-do, a risk or an open point (checked on its words, case folded).
_TODO = re.compile(
    r"\b(?:need|needs|needed|still need|bring|buy|book|order|pack|prepare|prep|print|send|"
    r"check|confirm|collect|arrange|to do|todo|must|wants|asked for|asks for|not sorted|"
    r"not done|not booked|not paid|back to|hand back|returned|"
    r"return(?!\s+(?:each|tickets?|flights?|fares?|trips?|journey|pp|per)\b))\b|"
    r"\bby \d{1,2}[:.]\d{2}\b"
)
# A note whose label names things to have ready ("Resources: 14 laptops, projector").
_THINGS = re.compile(
    r"^(?:resources|materials|equipment|supplies|kit|packing|to bring|requirements|must-haves?)$"
)
_RISK = re.compile(
    r"\b(?:risk|risks|late|delay|delays|delayed|overrun|increase|increases|rises?|concern|"
    r"issue|issues|problem|problems|tight|short of|shortage|expires?|deadline|only|not enough|"
    r"no one|nobody|fail|fails|failed|complain|complaints|out of order|broken|unavailable|"
    r"not available|closed|missing|blocked)\b"
)
_OPEN = re.compile(
    r"\?|\b(?:tbd|tbc|to decide|to be decided|not sure|unsure|unclear|open|pending|undecided|"
    r"maybe|either|or not|wants|asked for|asks for|waiting for|waiting on)\b"
)
CUES = {"todo": _TODO, "risk": _RISK, "open": _OPEN}
_NOT_DONE = re.compile(r"\bnot (?:sorted|done|booked|paid)\b")


def noted(document: str, chat: Sequence[str], cue: str) -> list[str]:
    """The notes of the document and chat that read as a to-do, a risk or an open point
    (``cue``), as written; a to-do note listing things ("need: gloves, a first aid kit") gives
    one item per thing."""
    pattern = CUES[cue]
    lines = note_lines(document) + [" ".join(m.split()) for m in chat if len(m.split()) >= 3]
    out: list[str] = []
    for line in lines:
        if len(line.split()) <= 3 and "?" not in line and not _NOT_DONE.search(line.casefold()):
            continue  # a label ("Issues so far"), not a note ("broadband not sorted" is one)
        head, colon, rest = line.partition(":")
        things_label = cue == "todo" and colon and _THINGS.match(head.strip().casefold())
        if not things_label and not pattern.search(line.casefold()):
            continue
        # one thing per comma, semicolon or "and", not inside brackets ("(Hana 7, Leo 4)")
        split = r",(?![^()]*\))|;|\band\b(?![^()]*\))"
        things = [t.strip(" .") for t in re.split(split, rest)] if colon else []
        if cue == "todo" and len([t for t in things if t]) >= 2:
            out += [f"{head.strip()}: {t}" for t in things if t]
        else:
            out.append(line.rstrip("."))
    return list(dict.fromkeys(out))
