"""Options and reminders read from the task's own notes (pure Python, no Django).

"options for day 2", "what are our options?": the choices the task leaves open ("day trip to
Douro undecided", "port tasting? Graham's vs Taylor's"), each with what the chat said of it
("Bea: I vote Douro"), nearest the request's words first. "list 3 reminders": the notes that
carry a date, a time or an amount ("rent due £45 by 30 Nov"), then what is left to do.
Nothing is reworded, so nothing is invented; when the task holds no such note, the answer says
so once.
"""

from __future__ import annotations

import re

from agents.skills.facts import TaskFacts
from agents.skills.notes import note_lines, noted
from agents.skills.quote import content_words
from agents.skills.work import SkillAnswer
from agents.skills.write import as_list, finish

# A note that holds a choice: a question, "A vs B", "A or B?", "undecided", "maybe".
_CHOICE = re.compile(
    r"\?|\b(?:vs\.?|versus|undecided|not decided|tbd|tbc|to decide|maybe|either|option|"
    r"options|or not|not sure|unsure)\b"
)
_DATED = re.compile(
    r"\b\d{1,2}(?:st|nd|rd|th)?\s+(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b|"
    r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\s+\d{1,2}\b|"
    r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s?(?:am|pm)\b|"
    r"[£$€]\s?\d|\b(?:due|deadline|by)\b",
    re.IGNORECASE,
)
_ABOUT_WORDS = frozenset({"optio", "choic", "alter", "idea", "ideas", "remin", "list"})


def _said_in_chat(note: str, chat: tuple[str, ...]) -> list[str]:
    mine = content_words(note)
    return [m for m in chat if content_words(m) & mine and m.strip() != note.strip()]


def options(facts: TaskFacts, request: str, count: int | None = None) -> SkillAnswer:
    """The choices the task's notes leave open, nearest the request's words first, each with
    the chat's words on it."""
    notes = [n for n in note_lines(facts.document) if _CHOICE.search(n.casefold())]
    chat_choices = [
        " ".join(m.split()) for m in facts.chat if _CHOICE.search(m.casefold()) and "?" in m
    ]
    wanted = content_words(request) - _ABOUT_WORDS
    found = list(dict.fromkeys([*notes, *chat_choices]))
    found.sort(key=lambda n: -len(content_words(n) & wanted))
    if not found:
        text = (
            "The task names no options for that yet (its document and chat hold no open "
            "choice); add them to the document and I can compare them."
        )
        return SkillAnswer("options", finish(text, facts.prefs))
    items = []
    for note in found[:count] if count else found:
        said = [f"“{m}”" for m in _said_in_chat(note, facts.chat)][:2]
        items.append(f"{note} (chat: {', '.join(said)})" if said else note)
    lead = "The options the task mentions:"
    return SkillAnswer("options", finish(f"{lead}\n{as_list(items, facts.prefs)}", facts.prefs))


def reminders(facts: TaskFacts, count: int | None = None) -> SkillAnswer:
    """The notes with a date, a time or an amount, then what the notes leave to do."""
    dated = [n for n in note_lines(facts.document) if _DATED.search(n)]
    todo = noted(facts.document, facts.chat, "todo")
    found = list(dict.fromkeys([*dated, *todo]))
    if not found:
        text = (
            "The task holds no date, amount or to-do to remind people of yet; add them to the "
            "document and I can list them."
        )
        return SkillAnswer("reminders", finish(text, facts.prefs))
    items = found[:count] if count else found
    return SkillAnswer(
        "reminders", finish(f"Reminders:\n{as_list(items, facts.prefs)}", facts.prefs)
    )
