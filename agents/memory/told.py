"""Preferences told to an agent in the chat ("@Assistant I prefer bullet points and British
spelling"), kept at once like "remember that ...", one item per preference (pure Python)."""

from __future__ import annotations

import re

from agents.memory.extractors import (
    _MENTIONS,
    PREFERENCE,
    Command,
    Proposal,
    Structured,
    _clean,
    _first_person,
    structure,
)

# A preference said to an agent about oneself or as a standing rule ("@Assistant I prefer
# bullet points", "@Assistant always use British spelling"), not an order for one piece of
# work ("bullet the key points"): kept at once, like "remember that ...".
SPEAKS_FOR_ITSELF = re.compile(
    r"(?i)\b(?:i|i'?d|i'?m|we|we'?d|me|my|our|us|prefer|prefers|preferably|always|never|"
    r"from now on|in future|going forward|by default)\b|^\s*(?:please\s+)?(?:use|keep|write in)\b"
)
_CLAUSES = re.compile(r"\s*(?:[,;]|\band\b|\balso\b|\bplus\b)\s*", re.IGNORECASE)
_ADDRESSED = re.compile(r"^\s*@[\w.-]+")


def preference_parts(text: str) -> list[tuple[str, Structured]]:
    """Each preference a sentence states, one per clause, with the clause as a sentence of its
    own: "I prefer bullet points and British spelling" gives ("I prefer bullet points",
    list_style=bullets) and ("I prefer British spelling", spelling=british). A clause after
    the first is read as continuing it; one key is kept once."""
    if not SPEAKS_FOR_ITSELF.search(text):
        return []
    found: dict[str, tuple[str, Structured]] = {}
    clauses = [c for c in _CLAUSES.split(text) if c.strip()]
    for index, clause in enumerate(clauses):
        said = clause.strip(" .!")
        if index and not SPEAKS_FOR_ITSELF.search(said):
            said = f"I prefer {said}"  # "... and British spelling" continues the first clause
        read = structure(said)
        if read is not None and read.kind == PREFERENCE and read.key:
            found.setdefault(read.key, (said, read))
    return list(found.values())


def told_preferences(body: str) -> list[Command]:
    """The preferences a message addressed to an agent states about its author, each as a
    "remember that ..." command ("@Assistant I prefer bullet points and British spelling")."""
    if not _ADDRESSED.match(body):  # the caller read "remember that ..." first
        return []
    text = re.sub(_MENTIONS, "", body).strip()
    if "?" in text:
        return []  # "do you prefer ...?" asks; it tells nothing
    return [
        Command(
            proposal=Proposal(
                text=_first_person(_clean(said)),
                kind=PREFERENCE,
                confidence=0.9,
                key=read.key,
                value=read.value,
                kinds=read.kinds,
            ),
            scope="personal",
        )
        for said, read in preference_parts(text)
    ]
