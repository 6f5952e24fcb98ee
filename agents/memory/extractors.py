"""Cheap, rule-based reading of chat text: explicit commands and plain preference statements.

Pure Python (no Django, no I/O) so the rules are easy to test and to extend. The model-based
extraction in ``reflection.py`` catches what these rules miss.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

PREFERENCE = "preference"
FACT = "fact"
INSTRUCTION = "instruction"

#: The structured keys policies and prompts understand, with the values they take.
KNOWN_KEYS: dict[str, str] = {
    "lists": "bullets, numbered or prose",
    "spelling": "en-GB or en-US",
    "tone": "formal, casual, friendly or neutral",
    "max_words": "a whole number of words",
    "asking": "less or more (how often agents ask before acting)",
}


@dataclass(frozen=True)
class Proposal:
    """Something to remember (or forget) about one person, before reconciliation."""

    text: str
    kind: str = PREFERENCE
    key: str = ""
    value: str = ""
    confidence: float = 0.8
    forget: bool = False


@dataclass(frozen=True)
class Command:
    """An explicit "remember that …" / "forget …" in a chat message."""

    proposal: Proposal
    scope: str  # "personal", "workspace" or "team"


_MENTIONS = r"^\s*(?:@[\w.-]+[\s,:]*)*"
_SCOPE = (
    r"(?:\s+(?P<scope>for\s+(?:this\s+workspace|the\s+team|our\s+team|the\s+workspace)"
    r"|in\s+this\s+workspace))?"
)
_REMEMBER = re.compile(
    _MENTIONS
    + r"(?:please\s+)?remember"
    + _SCOPE
    + r"(?:\s*[:,])?(?:\s+that)?\s*[:,]?\s+(?P<body>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_FORGET = re.compile(
    _MENTIONS
    + r"(?:please\s+)?forget"
    + _SCOPE
    + r"(?:\s+(?:that|about))?\s*[:,]?\s+(?P<body>\S.*)$",
    re.IGNORECASE | re.DOTALL,
)
_REMINDER = re.compile(r"^to\s", re.IGNORECASE)
_EVERYTHING = re.compile(r"^(?:everything|all|it all|all of it)\W*$", re.IGNORECASE)


def _scope_of(words: str | None) -> str:
    if not words:
        return "personal"
    return "team" if "team" in words.lower() else "workspace"


def _clean(text: str) -> str:
    text = " ".join(text.split())
    return text.rstrip(" .!")[:500]


def parse_command(body: str) -> Command | None:
    """The remember/forget command in a message, if it starts with one.

    "forget everything" is not a chat command: wiping memory is done on the memory page.
    """
    for pattern, forget in ((_REMEMBER, False), (_FORGET, True)):
        match = pattern.match(body)
        if match is None:
            continue
        text = _clean(match.group("body"))
        if not text or (forget and _EVERYTHING.match(text)):
            return None
        if not forget and _REMINDER.match(text):
            return None  # "remember to call Sam" is a reminder, not something to keep
        structured = structure(text)
        proposal = Proposal(text=_first_person(text), kind=INSTRUCTION, confidence=0.95)
        if structured is not None:
            proposal = replace(
                proposal, kind=structured.kind, key=structured.key, value=structured.value
            )
        return Command(proposal=replace(proposal, forget=forget), scope=_scope_of(match["scope"]))
    return None


def _first_person(text: str) -> str:
    """ "I like bullets" stays; the command's subject is the speaker."""
    return text[0].upper() + text[1:] if text else text


# --- Structured preferences ------------------------------------------------------------------

_NEGATED_BULLETS = re.compile(
    r"\b(?:no|not|without|never|don'?t use|do not use|avoid|stop using)\s+(?:any\s+)?bullet",
    re.IGNORECASE,
)
_RULES: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"\bnumbered\s+(?:lists?|points?|steps?)\b", re.I), "lists", "numbered"),
    (
        re.compile(r"\bbullet(?:ed)?(?:[- ]?(?:points?|lists?))?\b|\bbullets\b", re.I),
        "lists",
        "bullets",
    ),
    (re.compile(r"\b(?:plain\s+)?prose\b|\bfull paragraphs\b", re.I), "lists", "prose"),
    (
        re.compile(r"\b(?:british|uk|en-gb)\s+(?:english|spelling)\b|\ben-gb\b|\bbritish\b", re.I),
        "spelling",
        "en-GB",
    ),
    (
        re.compile(
            r"\b(?:american|us|en-us)\s+(?:english|spelling)\b|\ben-us\b|\bamerican\b", re.I
        ),
        "spelling",
        "en-US",
    ),
    (
        re.compile(
            r"\bask(?:ing)?\s+(?:me\s+)?(?:fewer|less)\b|\bstop\s+asking\b"
            r"|\bdon'?t\s+ask\s+(?:me\s+)?so\s+many\b|\btoo\s+many\s+questions\b"
            r"|\bask\s+me\s+less\b|\bfewer\s+questions\b",
            re.I,
        ),
        "asking",
        "less",
    ),
    (
        re.compile(
            r"\bask\s+(?:me\s+)?(?:more|first|before)\b|\bcheck\s+with\s+me\s+(?:first|before)\b",
            re.I,
        ),
        "asking",
        "more",
    ),
]
_TONE = re.compile(
    r"\b(?:tone|keep\s+it|be|write(?:\s+in\s+a)?|sound|style)\s+(?:more\s+|a\s+bit\s+more\s+)?"
    r"(?P<tone>formal|casual|informal|friendly|neutral)\b|\b(?P<tone2>formal|casual|informal|friendly)\s+tone\b",
    re.I,
)
_MAX_WORDS = re.compile(
    r"\b(?:under|at\s+most|no\s+more\s+than|max(?:imum)?(?:\s+of)?|fewer\s+than|less\s+than"
    r"|below|within|up\s+to)\s+(?P<n>\d{1,5})\s+words\b",
    re.I,
)


@dataclass(frozen=True)
class Structured:
    kind: str
    key: str
    value: str


def structure(text: str) -> Structured | None:
    """The structured key/value a sentence states, if one of the known rules fits."""
    if _NEGATED_BULLETS.search(text):
        return Structured(PREFERENCE, "lists", "prose")
    words = _MAX_WORDS.search(text)
    if words:
        return Structured(PREFERENCE, "max_words", str(int(words["n"])))
    tone = _TONE.search(text)
    if tone:
        value = (tone["tone"] or tone["tone2"]).lower()
        return Structured(PREFERENCE, "tone", "casual" if value == "informal" else value)
    for pattern, key, value in _RULES:
        if pattern.search(text):
            return Structured(PREFERENCE, key, value)
    return None


# Sentences that state a lasting preference rather than a one-off request.
_STATEMENT = re.compile(
    r"\b(?:i\s+(?:prefer|like|love|want|need|hate|dislike|'d\s+like|would\s+like|always|never)"
    r"|i'd\s+(?:rather|like|prefer)|please\s+(?:always|never|use|keep|write|stop|don'?t)"
    r"|always\s+use|from\s+now\s+on|in\s+future|going\s+forward|(?:don'?t|do\s+not)\s+ask"
    r"|stop\s+asking|too\s+many\s+questions|ask\s+me\s+less)\b",
    re.I,
)
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")


def extract_statements(body: str) -> list[Proposal]:
    """Preference statements with a known structured key in a chat message."""
    found: dict[str, Proposal] = {}
    for sentence in _SENTENCES.split(body):
        sentence = _clean(sentence)
        if len(sentence) < 6 or not _STATEMENT.search(sentence):
            continue
        structured = structure(sentence)
        if structured is None:
            continue
        found[structured.key] = Proposal(
            text=_first_person(sentence),
            kind=structured.kind,
            key=structured.key,
            value=structured.value,
            confidence=0.7,
        )
    return list(found.values())
