"""Cheap, rule-based reading of chat text: explicit commands and plain preference statements.

Pure Python (no Django, no I/O) so the rules are easy to test and to extend. The model-based
extraction in ``reflection.py`` catches what these rules miss.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Protocol

from agents.policies.emphasis import bold_numbers_wish
from agents.policies.templates import load_templates

PREFERENCE = "preference"
FACT = "fact"
INSTRUCTION = "instruction"

#: The structured keys the policies and the output step apply (SHARED_CONTRACTS.md,
#: ``agents.policies.memory_facts``), with the values each takes. ``slot:<name>`` keys fill a
#: template slot (``slot:duration = 15 minutes``).
KNOWN_KEYS: dict[str, str] = {
    "spelling": "british or american",
    "list_style": "bullets, numbered or prose",
    "length": "short, medium or long",
    "tone": "formal, casual or friendly",
    "date_format": "iso (2027-03-04), day_month_year (4 March 2027) or month_day_year "
    "(March 4, 2027)",
    "number_format": "a short description (decimal comma, thousands with spaces, ...)",
    "bold_numbers": "yes or no (the key numbers, with their unit or currency, in bold)",
    "headings": "yes or no",
    "asking": "less, more, at_most:N or never (how often agents ask before acting)",
    "slot:<name>": "a value that fills a template slot, e.g. slot:duration = 15 minutes",
}
#: The values a key accepts (keys not listed take any short value).
KEY_VALUES: dict[str, frozenset[str]] = {
    "spelling": frozenset({"british", "american"}),
    "list_style": frozenset({"bullets", "numbered", "prose"}),
    "length": frozenset({"short", "medium", "long"}),
    "tone": frozenset({"formal", "casual", "friendly"}),
    "date_format": frozenset({"iso", "day_month_year", "month_day_year"}),
    "headings": frozenset({"yes", "no"}),
    "bold_numbers": frozenset({"yes", "no"}),
}
_ASKING_VALUE = re.compile(r"^(?:less|more|never|at_most:\d{1,2})$")
_KEY = re.compile(r"^(?:[a-z][a-z0-9_]*|slot:[a-z][a-z0-9_]*)$")


def key_problem(key: str, value: str) -> str | None:
    """Why ``key = value`` is not a valid structured preference, or ``None``."""
    if not _KEY.match(key):
        return "A key is a short lower-case word (letters, digits, underscores), or slot:<name>."
    allowed = KEY_VALUES.get(key)
    if allowed is not None and value not in allowed:
        return f"{key} is one of: {', '.join(sorted(allowed))}."
    if key == "asking" and not _ASKING_VALUE.match(value):
        return "asking is less, more, never or at_most:N."
    if key == "max_words" and not value.isdigit():
        return "max_words is a whole number."
    return None


@dataclass(frozen=True)
class Proposal:
    """Something to remember (or forget) about one person, before reconciliation."""

    text: str
    kind: str = PREFERENCE
    key: str = ""
    value: str = ""
    confidence: float = 0.8
    forget: bool = False
    kinds: tuple[str, ...] = ()  # the kinds of work (template keys) it applies to; () = all

    @classmethod
    def of(cls, said: Remembered, *, kinds: tuple[str, ...] = (), forget: bool = False) -> Proposal:
        """What ``said`` says, to reconcile again: a memory item widened, a suggestion
        accepted, an entry of an imported file."""
        return cls(
            text=said.text,
            kind=said.kind,
            key=said.key,
            value=said.value,
            confidence=said.confidence,
            forget=forget,
            kinds=kinds,
        )


class Remembered(Protocol):
    """Anything that states a memory: an item, a candidate, an imported entry."""

    @property
    def text(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def key(self) -> str: ...
    @property
    def value(self) -> str: ...
    @property
    def confidence(self) -> float: ...


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
                proposal,
                kind=structured.kind,
                key=structured.key,
                value=structured.value,
                kinds=structured.kinds,
            )
        return Command(proposal=replace(proposal, forget=forget), scope=_scope_of(match["scope"]))
    return None


_SUBJECT = re.compile(
    r"^(?P<name>@?[^\W\d_][\w.'-]{0,149})\s+(?:prefers|likes|loves|wants|needs|hates|dislikes"
    r"|always|never|uses|writes|is|has|asks|does|doesn't|does\s+not)\b",
    re.IGNORECASE,
)
_SELF = frozenset({"i", "i'm", "we", "my", "our", "me", "the", "this", "that", "it", "everyone"})


def subject_name(text: str) -> str | None:
    """The name a remembered sentence is about when it starts with one ("Zoë prefers …"),
    ``None`` when it is about the speaker or nobody in particular ("I prefer …", "our …")."""
    match = _SUBJECT.match(text)
    if match is None:
        return None
    name = match["name"].lstrip("@")
    return None if name.lower() in _SELF else name


def _first_person(text: str) -> str:
    """ "I like bullets" stays; the command's subject is the speaker."""
    return text[0].upper() + text[1:] if text else text


# --- Structured preferences ------------------------------------------------------------------

_NUMBER_WORDS = {
    "no": 0, "zero": 0, "one": 1, "a single": 1, "a": 1, "two": 2, "three": 3, "four": 4,
    "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
}  # fmt: skip


def _count(word: str) -> int | None:
    word = word.strip().lower()
    if word.isdigit():
        return int(word)
    return _NUMBER_WORDS.get(word)


_COUNT = r"(?P<n>\d{1,2}|no|zero|one|a\s+single|a|two|three|four|five|six|seven|eight|nine|ten)"
_AT_MOST_QUESTIONS = re.compile(
    r"\b(?:at\s+most|no\s+more\s+than|max(?:imum)?(?:\s+of)?|only|just|up\s+to)\s+"
    + _COUNT
    + r"\s+(?:clarifying\s+|follow[- ]up\s+)?questions?\b",
    re.I,
)
_NEVER_ASK = re.compile(
    r"\bjust\s+(?:go\s+ahead|do\s+it|get\s+on\s+with\s+it)\b|\bnever\s+ask\b"
    r"|\b(?:don'?t|do\s+not)\s+ask\s+(?:me\s+)?(?:any(?:thing)?|questions)\b"
    r"|\bno\s+questions\b|\bwithout\s+asking\b",
    re.I,
)
_NEGATED_BULLETS = re.compile(
    r"\b(?:no|not|without|never|don'?t use|do not use|avoid|stop using)\s+(?:any\s+)?bullet",
    re.I,
)
_NEGATED_NUMBERED = re.compile(r"\b(?:no|not|without|never|avoid)\s+(?:any\s+)?numbered", re.I)
_NO_LISTS = re.compile(
    r"\b(?:no|not|without|never|avoid)\s+(?:any\s+)?lists?\b|\bas\s+(?:short\s+)?paragraphs\b",
    re.I,
)
_NO_HEADINGS = re.compile(
    r"\b(?:no|not|without|never|don'?t use|do not use|avoid|skip|stop using)\s+(?:any\s+)?"
    r"(?:headings?|headers?|section titles)\b",
    re.I,
)
_HEADINGS = re.compile(
    r"\b(?:use|with|add|include|like|prefer)\s+(?:\w+\s+)?(?:headings|headers)\b", re.I
)
_WORD_LIMIT = re.compile(
    r"\b(?:under|at\s+most|no\s+more\s+than|max(?:imum)?(?:\s+of)?|fewer\s+than|less\s+than"
    r"|below|within|up\s+to)\s+(?P<n>\d{1,5})\s+words\b"
    r"|\b(?P<n2>\d{1,5})\s+words\s+(?:at\s+most|max(?:imum)?|or\s+(?:less|fewer))\b",
    re.I,
)
_SHORT = re.compile(
    r"\b(?:keep\s+(?:it|things|them|replies|answers|messages|everything|documents|drafts)\s+"
    r"|be\s+"
    r"|(?:prefer|like|want|need)\s+(?:things\s+)?)"
    r"(?:short|brief|concise|terse|succinct|to\s+the\s+point)\b"
    r"|\b(?:short|brief|concise|shorter)\s+"
    r"(?:answers?|replies|responses|messages|summaries|drafts?)\b",
    re.I,
)
_LONG = re.compile(
    r"\b(?:long(?:er)?|detailed|in[- ]depth|thorough|comprehensive)\s+"
    r"(?:answers?|replies|responses|write-?ups?|explanations?|drafts?)\b|\bmore\s+detail\b",
    re.I,
)
_TONE = re.compile(
    r"\b(?:tone|keep\s+it|be|write(?:\s+in\s+a)?|sound|style)\s+(?:more\s+|a\s+bit\s+more\s+)?"
    r"(?P<tone>formal|casual|informal|friendly)\b"
    r"|\b(?P<tone2>formal|casual|informal|friendly)\s+(?:tone|style|register)\b",
    re.I,
)
_DATE_ISO = re.compile(
    r"\biso(?:[- ]?8601)?\s+dates?\b|\byyyy-mm-dd\b|\bdates?\s+(?:as|in)\s+iso\b"
    r"|\b\d{4}-\d{2}-\d{2}\b",
    re.I,
)
_DATE_DMY = re.compile(
    r"\bday[- ]month[- ]year\b|\bdd/mm(?:/yy(?:yy)?)?\b|\bbritish\s+dates?\b|\beuropean\s+dates?\b"
    r"|\b\d{1,2}\s+(?:january|february|march|april|may|june|july|august|september|october"
    r"|november|december)\s+\d{4}\b",
    re.I,
)
_DATE_MDY = re.compile(
    r"\bmonth[- ]day[- ]year\b|\bmm/dd(?:/yy(?:yy)?)?\b|\bamerican\s+dates?\b|\bus\s+dates?\b"
    r"|\b(?:january|february|march|april|may|june|july|august|september|october|november"
    r"|december)\s+\d{1,2},\s+\d{4}\b",
    re.I,
)
_NUMBER_FORMAT = re.compile(
    r"\b(?P<desc>decimal\s+(?:commas?|points?|dots?)"
    r"|(?:spaces?|commas?|dots?|points?|apostrophes?)\s+(?:as|for)\s+(?:the\s+)?thousands?(?:\s+separators?)?"
    r"|thousands?\s+(?:separated\s+)?(?:with|by)\s+(?:spaces?|commas?|dots?|points?|apostrophes?)"
    r"|no\s+thousands?\s+separators?)\b",
    re.I,
)
_RULES: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"\bnumbered\s+(?:lists?|points?|steps?)\b", re.I), "list_style", "numbered"),
    (
        re.compile(r"\bbullet(?:ed)?(?:[- ]?(?:points?|lists?))?\b|\bbullets\b", re.I),
        "list_style",
        "bullets",
    ),
    (re.compile(r"\b(?:plain\s+)?prose\b|\bfull\s+paragraphs\b", re.I), "list_style", "prose"),
    (
        re.compile(r"\b(?:british|uk|en-gb)\s+(?:english|spelling)\b|\ben-gb\b|\bbritish\b", re.I),
        "spelling",
        "british",
    ),
    (
        re.compile(
            r"\b(?:american|us|en-us)\s+(?:english|spelling)\b|\ben-us\b|\bamerican\b", re.I
        ),
        "spelling",
        "american",
    ),
    (
        re.compile(
            r"\bask(?:ing)?\s+(?:me\s+)?(?:fewer|less)\b|\bstop\s+asking\b"
            r"|\bdon'?t\s+ask\s+(?:me\s+)?so\s+many\b|\btoo\s+many\s+questions\b"
            r"|\bask\s+me\s+less\b|\bfewer\s+questions\b|\bless\s+questions\b",
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

# "our stand-ups always run 15 minutes": a value for one kind of work's slot.
_DURATION = re.compile(
    r"\b(?P<amount>\d{1,3}(?:[.,]\d)?|an?|half\s+an?|one|two|three|four|five|ten|fifteen|twenty"
    r"|thirty|forty[- ]five|sixty|ninety)\s*[- ]?\s*(?P<unit>minutes?|mins?|hours?|hrs?|h|days?)\b",
    re.I,
)
_HABIT = re.compile(
    r"\b(?:our|my|the|all)\s+(?P<what>[\w' -]{2,40}?)\s+(?:always|usually|normally|typically|"
    r"generally)?\s*(?:runs?|lasts?|takes?|are|is|go(?:es)?\s+for)\s+(?:about\s+|around\s+|for\s+)?"
    r"(?P<rest>.+)$",
    re.I,
)
_UNIT_NAMES = {"min": "minutes", "mins": "minutes", "minute": "minutes", "h": "hours",
               "hr": "hours", "hrs": "hours", "hour": "hours", "day": "days"}  # fmt: skip


def _plural_free(word: str) -> str:
    word = word.lower().replace("-", "").replace(" ", "")
    return word[:-1] if word.endswith("s") else word


def kinds_of_work(text: str) -> tuple[str, ...]:
    """The kinds of work (task template keys) a sentence names, by the templates' keywords;
    tolerant of plurals and hyphens ("stand-ups" names the meeting brief's "standup")."""
    words = {_plural_free(w) for w in re.findall(r"[^\W_]+(?:-[^\W_]+)*", text)}
    found = []
    for kind, template in sorted(load_templates().items()):
        keywords = {_plural_free(k) for k in template.keywords if re.fullmatch(r"[\w-]+", k)}
        if words & keywords:
            found.append(kind)
    return tuple(found)


def _slot(text: str) -> Structured | None:
    habit = _HABIT.search(text)
    if habit is None:
        return None
    kinds = kinds_of_work(habit["what"])
    duration = _DURATION.search(habit["rest"])
    if not kinds or duration is None:
        return None
    amount = duration["amount"].lower()
    unit = duration["unit"].lower()
    unit = _UNIT_NAMES.get(unit, unit if unit.endswith("s") else unit + "s")
    return Structured(PREFERENCE, "slot:duration", f"{amount} {unit}", kinds)


@dataclass(frozen=True)
class Structured:
    kind: str
    key: str
    value: str
    kinds: tuple[str, ...] = ()


def structure(text: str) -> Structured | None:
    """The structured key/value a sentence states, if one of the known rules fits. Where the
    sentence names a kind of work ("for meeting briefs"), the preference is scoped to it."""
    found = _structure(text)
    if found is None or found.kinds:
        return found
    kinds = kinds_of_work(text) if found.key != "asking" else ()
    return replace(found, kinds=kinds)


def _structure(text: str) -> Structured | None:
    slot = _slot(text)
    if slot is not None:
        return slot
    at_most = _AT_MOST_QUESTIONS.search(text)
    if at_most is not None:
        count = _count(re.sub(r"\s+", " ", at_most["n"]))
        if count is not None:
            return Structured(PREFERENCE, "asking", "never" if count == 0 else f"at_most:{count}")
    if _NEVER_ASK.search(text):
        return Structured(PREFERENCE, "asking", "never")
    if _NEGATED_BULLETS.search(text) or _NO_LISTS.search(text):
        numbered = _RULES[0][0].search(text) and not _NEGATED_NUMBERED.search(text)
        return Structured(PREFERENCE, "list_style", "numbered" if numbered else "prose")
    if _NO_HEADINGS.search(text):
        return Structured(PREFERENCE, "headings", "no")
    if _HEADINGS.search(text):
        return Structured(PREFERENCE, "headings", "yes")
    words = _WORD_LIMIT.search(text)
    if words:
        limit = int(words["n"] or words["n2"])
        return Structured(
            PREFERENCE, "length", "short" if limit <= 200 else "medium" if limit <= 600 else "long"
        )
    tone = _TONE.search(text)
    if tone:
        value = (tone["tone"] or tone["tone2"]).lower()
        return Structured(PREFERENCE, "tone", "casual" if value == "informal" else value)
    for pattern, value in (
        (_DATE_ISO, "iso"),
        (_DATE_DMY, "day_month_year"),
        (_DATE_MDY, "month_day_year"),
    ):
        if pattern.search(text) and re.search(r"\bdates?\b|\d{4}", text, re.I):
            return Structured(PREFERENCE, "date_format", value)
    bold = bold_numbers_wish(text)
    if bold is not None:
        return Structured(PREFERENCE, "bold_numbers", bold)
    number = _NUMBER_FORMAT.search(text)
    if number:
        return Structured(PREFERENCE, "number_format", " ".join(number["desc"].lower().split()))
    for pattern, key, value in _RULES:
        if pattern.search(text):
            return Structured(PREFERENCE, key, value)
    if _LONG.search(text):
        return Structured(PREFERENCE, "length", "long")
    if _SHORT.search(text):
        return Structured(PREFERENCE, "length", "short")
    return None


# Sentences that state a lasting preference rather than a one-off request.
_STATEMENT = re.compile(
    r"\b(?:i\s+(?:prefer|like|love|want|need|hate|dislike|'d\s+like|would\s+like|always|never)"
    r"|i'd\s+(?:rather|like|prefer)|please\s+(?:always|never|use|keep|write|stop|don'?t)"
    r"|always\s+use|from\s+now\s+on|in\s+future|going\s+forward|(?:don'?t|do\s+not)\s+ask"
    r"|stop\s+asking|too\s+many\s+questions|ask\s+me\s+less|just\s+go\s+ahead"
    r"|at\s+most\s+\w+\s+questions?|(?:our|my)\s+[\w' -]+?\s+(?:always|usually|normally))\b",
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
            kinds=structured.kinds,
        )
    return list(found.values())
