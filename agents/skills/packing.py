"""A packing list for a task of no known kind (pure Python, no Django): what the task's notes
and chat say to bring, as written, then what its own activities clearly imply (a beach day:
swimwear), marked as suggestions and said with the words that imply them. Nothing else: when
the task says neither, the answer says plainly, once, what it needs to know. The activities
and what they imply are data (``[[packing]]`` in ``agents/task_templates/_generic.toml``).
"""

from __future__ import annotations

import re

from agents.skills.facts import TaskFacts
from agents.skills.generic import generic_kind
from agents.skills.notes import note_lines
from agents.skills.work import SkillAnswer, _count
from agents.skills.write import and_list, finish

# A packing request: "packing list", "what should I bring?", "what do we pack?"
PACKING_REQUEST = re.compile(r"(?i)\b(?:pack|packing|bring|take with (?:me|us))\b")
# A note that names things to bring: labelled ("To bring: ...") or said ("bring the tent").
_THINGS_LABEL = re.compile(
    r"(?i)^\s*(?:packing(?: list)?|to bring|to pack|bring|pack|kit|gear|equipment|"
    r"don'?t forget|remember)\s*:\s*(?P<things>.+)$"
)
_BRING = re.compile(r"(?i)\b(?:bring|brings|bringing|pack|packing|don'?t forget|forget)\b")
_SPLIT = re.compile(r",(?![^()]*\))|;|\band\b(?![^()]*\))")
NEEDS_TO_KNOW = (
    "I can't make a packing list from what the task says yet: it doesn't say what it "
    "involves. Add where you're going, how you travel and what you'll do there to the notes "
    "(or tell me), and I'll list what to bring."
)


def is_packing(request: str) -> bool:
    return bool(PACKING_REQUEST.search(request))


def stated_things(facts: TaskFacts) -> list[tuple[str, str]]:
    """(thing, where it is said) for what the notes and chat say to bring, as written: each
    thing of a labelled list ("To bring: tent, stove"), else the whole line that says to bring
    or pack something."""
    lines = [(line, "the notes") for line in note_lines(facts.document)]
    lines += [(" ".join(m.split()), "the chat") for m in facts.chat]
    out: dict[str, str] = {}
    for line, origin in lines:
        labelled = _THINGS_LABEL.match(line)
        if labelled is not None:
            for thing in _SPLIT.split(labelled["things"]):
                if thing.strip(" ."):
                    out.setdefault(thing.strip(" ."), origin)
        elif _BRING.search(line) and len(line.split()) >= 2:
            out.setdefault(line.rstrip("."), origin)
    return list(out.items())


def implied_things(facts: TaskFacts, stated: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(thing, the task's word that implies it) for each activity the task's own text names;
    a thing the notes already list is left out."""
    text = facts.stated.casefold()
    said = " ".join(thing for thing, _ in stated).casefold()
    out: list[tuple[str, str]] = []
    for cues, things in generic_kind().packing:
        cue = next((c for c in cues if re.search(rf"(?<!\w){re.escape(c)}(?!\w)", text)), None)
        if cue is None:
            continue
        for thing in things:
            core = re.sub(r"^(?:a|an|some)\s+", "", thing).split()[0].casefold()
            if not re.search(rf"(?<!\w){re.escape(core)}(?!\w)", said):
                out.append((thing, cue))
    return out


def packing_list(facts: TaskFacts, count: int | None = None) -> SkillAnswer:
    stated = stated_things(facts)
    implied = implied_things(facts, stated)
    if not stated and not implied:
        return SkillAnswer("checklist", finish(NEEDS_TO_KNOW, facts.prefs))
    items = [f"{thing} (from {origin})" for thing, origin in stated]
    by_cue: dict[str, list[str]] = {}
    for thing, cue in implied:
        by_cue.setdefault(cue, []).append(thing)
    items += [
        f"{thing} (suggested: the task mentions “{cue}”)"
        for cue, things in by_cue.items()
        for thing in things
    ]
    items = _count(items, count)
    lead = f"Packing list for {facts.title}:" if facts.title else "Packing list:"
    body = "\n".join(f"- [ ] {item[:1].upper()}{item[1:]}" for item in items)
    if facts.prefs.get("list_style") == "numbered":
        body = "\n".join(f"{n}. {item[:1].upper()}{item[1:]}" for n, item in enumerate(items, 1))
    note = ""
    if implied:
        cues = and_list(list(by_cue))
        note = (
            f"\n\nThe suggested items are not in the notes: I added them because the task "
            f"mentions {cues}. Take out what you don't need."
        )
    return SkillAnswer("checklist", finish(f"{lead}\n{body}{note}", facts.prefs))
