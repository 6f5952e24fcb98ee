"""Preferences followed in the work: a post-processing pass over what the agent writes, for
the preferences a rule can enforce (spelling variant, list style, date format, key numbers in
bold: `emphasis.py`), and prompt lines for the others (tone, length, headings, number format).

Pure Python. Reads only the requester's facts (`memory_facts.facts_for_requester`), scoped to
the kind of work (a fact with `kinds` applies only to those templates). Fenced code, inline
code and links are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import date

from agents.policies.emphasis import bold_numbers, bold_numbers_wish
from agents.policies.memory_facts import PREFERENCE_KEYS, MemoryFact

# British -> American stems; inflections (-s, -d, -ing, -ation, -er) follow the stem.
_SPELLING_STEMS = {
    "colour": "color",
    "flavour": "flavor",
    "behaviour": "behavior",
    "favour": "favor",
    "favourite": "favorite",
    "honour": "honor",
    "humour": "humor",
    "labour": "labor",
    "neighbour": "neighbor",
    "rumour": "rumor",
    "harbour": "harbor",
    "centre": "center",
    "theatre": "theater",
    "metre": "meter",
    "litre": "liter",
    "fibre": "fiber",
    "organis": "organiz",
    "realis": "realiz",
    "recognis": "recogniz",
    "prioritis": "prioritiz",
    "summaris": "summariz",
    "optimis": "optimiz",
    "emphasis": "emphasiz",
    "apologis": "apologiz",
    "customis": "customiz",
    "minimis": "minimiz",
    "maximis": "maximiz",
    "categoris": "categoriz",
    "standardis": "standardiz",
    "visualis": "visualiz",
    "finalis": "finaliz",
    "utilis": "utiliz",
    "analys": "analyz",
    "catalogue": "catalog",
    "dialogue": "dialog",
    "defence": "defense",
    "offence": "offense",
    "licence": "license",
    "travell": "travel",
    "cancell": "cancel",
    "modell": "model",
    "labell": "label",
    "jewellery": "jewelry",
    "grey": "gray",
    "aluminium": "aluminum",
    "programme": "program",
    "cheque": "check",
    "enrol": "enroll",
    "fulfil": "fulfill",
}


def _endings(british: str) -> tuple[str, ...]:
    if british.endswith(("is", "ys")):  # organis-e, analys-ed (never "emphasis" itself)
        return ("e", "es", "ed", "ing", "ation", "ations", "er", "ers")
    if british.endswith("our"):
        return ("", "s", "ed", "ing", "ful", "able", "ite", "ites")
    if british.endswith("ll"):  # travell-ed, travell-er
        return ("ed", "ing", "er", "ers")
    return ("", "s")


def _variants() -> dict[str, str]:
    pairs: dict[str, str] = {}
    for british, american in _SPELLING_STEMS.items():
        for ending in _endings(british):
            pairs.setdefault(british + ending, american + ending)
    return pairs


_BRITISH_TO_AMERICAN = _variants()
_AMERICAN_TO_BRITISH = {a: b for b, a in _BRITISH_TO_AMERICAN.items()}
# Words that look like a variant but are another word in the other spelling.
_KEEP = {
    "program",
    "programs",
    "check",
    "checks",
    "checked",
    "checking",
    "model",
    "models",
    "label",
    "labels",
    "travel",
    "travels",
    "cancel",
    "cancels",
    "meter",
    "meters",
    "license",
    "licenses",
    "enroll",
    "fulfill",
    "gray",
}

_PROTECTED = re.compile(r"```.*?```|`[^`\n]*`|\[[^\]\n]*\]\([^)\n]*\)|https?://\S+", re.DOTALL)


def _outside_protected(text: str, change: Callable[[str], str]) -> str:
    out, last = [], 0
    for m in _PROTECTED.finditer(text):
        out.append(change(text[last : m.start()]))
        out.append(m[0])
        last = m.end()
    out.append(change(text[last:]))
    return "".join(out)


def _match_case(word: str, like: str) -> str:
    if like.isupper() and len(like) > 1:
        return word.upper()
    if like[0].isupper():
        return word[0].upper() + word[1:]
    return word


def respell(text: str, variant: str) -> str:
    """The text in British or American spelling ("colour" <-> "color", "organise" <->
    "organize"), case kept; words that are another word in the other variant stay."""
    if variant == "american":
        table = _BRITISH_TO_AMERICAN
        skip: set[str] = set()
    elif variant == "british":
        table = _AMERICAN_TO_BRITISH
        skip = _KEEP
    else:
        return text

    def change(chunk: str) -> str:
        def one(m: re.Match[str]) -> str:
            word = m[0]
            lowered = word.casefold()
            if lowered in skip or lowered not in table:
                return word
            return _match_case(table[lowered], word)

        return re.sub(r"[A-Za-z]+", one, chunk)

    return _outside_protected(text, change)


_BULLET = re.compile(r"^(?P<indent>[ \t]*)[-*+][ \t]+(?P<body>.*)$")
_NUMBERED = re.compile(r"^(?P<indent>[ \t]*)\d{1,3}[.)][ \t]+(?P<body>.*)$")


def restyle_lists(text: str, style: str) -> str:
    """Top-level lists as bullets ("- ") or numbered ("1. "); "prose" leaves them alone."""
    if style not in ("bullets", "numbered"):
        return text
    lines = text.split("\n")
    out: list[str] = []
    counter = 0
    fenced = False
    for line in lines:
        if line.strip().startswith("```"):
            fenced = not fenced
        if fenced:
            out.append(line)
            continue
        m = _BULLET.match(line) or _NUMBERED.match(line)
        if m and not m["indent"]:
            counter += 1
            marker = f"{counter}." if style == "numbered" else "-"
            out.append(f"{marker} {m['body']}")
            continue
        if line.strip() and not m:
            counter = 0
        out.append(line)
    return "\n".join(out)


MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_MONTH_INDEX = {m.casefold(): i + 1 for i, m in enumerate(MONTH_NAMES)}
_ISO = re.compile(r"(?<![\d-])(\d{4})-(\d{2})-(\d{2})(?![\d-])")
_DMY = re.compile(rf"\b(\d{{1,2}})\s+({'|'.join(MONTH_NAMES)})\s+(\d{{4}})\b")
_MDY = re.compile(rf"\b({'|'.join(MONTH_NAMES)})\s+(\d{{1,2}}),\s+(\d{{4}})\b")


def _format_date(day: date, style: str) -> str:
    if style == "iso":
        return day.isoformat()
    if style == "day_month_year":
        return f"{day.day} {MONTH_NAMES[day.month - 1]} {day.year}"
    return f"{MONTH_NAMES[day.month - 1]} {day.day}, {day.year}"


def reformat_dates(text: str, style: str) -> str:
    """Full dates (2027-03-04, 4 March 2027, March 4, 2027) in the preferred format."""
    if style not in ("iso", "day_month_year", "month_day_year"):
        return text

    def safe(make: Callable[[re.Match[str]], date]) -> Callable[[re.Match[str]], str]:
        def replace(m: re.Match[str]) -> str:
            try:
                return _format_date(make(m), style)
            except ValueError:
                return m[0]

        return replace

    def change(chunk: str) -> str:
        chunk = _ISO.sub(safe(lambda m: date(int(m[1]), int(m[2]), int(m[3]))), chunk)
        chunk = _DMY.sub(
            safe(lambda m: date(int(m[3]), _MONTH_INDEX[m[2].casefold()], int(m[1]))), chunk
        )
        return _MDY.sub(
            safe(lambda m: date(int(m[3]), _MONTH_INDEX[m[1].casefold()], int(m[2]))), chunk
        )

    return _outside_protected(text, change)


# The preference kinds about the form of the work: every structured key but how often to ask.
STYLE_KEYS = frozenset(PREFERENCE_KEYS) - {"asking"}


def preferences(facts: Iterable[MemoryFact]) -> dict[str, str]:
    """The preference keys of these facts (newest wins). A fact without a key this pass knows
    (kept without one, or under a key of its own) is read by its words for the wishes the
    pass owns: "put the key numbers in bold" is ``bold_numbers = yes``, as the memory
    extractor would have keyed it; so is a number format that says bold."""
    out: dict[str, str] = {}
    for fact in facts:
        value = fact.value.strip().casefold()
        if fact.key in STYLE_KEYS and value:
            out[fact.key] = value
        if fact.key == "number_format" and re.search(r"\bbold", value):
            out["bold_numbers"] = "yes"
        elif fact.key not in PREFERENCE_KEYS and fact.slot_name is None:
            wish = bold_numbers_wish(fact.text) or bold_numbers_wish(fact.value)
            if wish is not None:
                out["bold_numbers"] = wish
    return out


def enforce(text: str, prefs: Mapping[str, str]) -> str:
    """The rules a preference can be enforced by, applied to one piece of the agent's output."""
    if not text:
        return text
    if "spelling" in prefs:
        text = respell(text, prefs["spelling"])
    if "list_style" in prefs:
        text = restyle_lists(text, prefs["list_style"])
    if "date_format" in prefs:
        text = reformat_dates(text, prefs["date_format"])
    if prefs.get("bold_numbers") == "yes":
        text = bold_numbers(text)
    return text


_HINTS = {
    "length": {
        "short": "Keep it short.",
        "medium": "Keep it to a moderate length.",
        "long": "Be thorough; a longer text is welcome.",
    },
    "tone": {
        "formal": "Use a formal tone.",
        "casual": "Use a casual tone.",
        "friendly": "Use a friendly tone.",
    },
    "headings": {"yes": "Use headings.", "no": "Do not use headings."},
}


def prompt_hints(prefs: Mapping[str, str]) -> str:
    """What the prompt says for the preferences no rule enforces (tone, length, headings,
    number format)."""
    hints = [_HINTS[k][v] for k, v in prefs.items() if k in _HINTS and v in _HINTS[k]]
    if prefs.get("number_format"):
        hints.append(f"Numbers: {prefs['number_format']}.")
    return " ".join(hints)


def restyle_actions(
    actions: list[dict[str, object]],
    prefs: Mapping[str, str],
    *,
    assumption: str = "",
    max_actions: int = 3,
    max_chars: int = 1500,
) -> list[dict[str, object]]:
    """The agent's actions with the enforceable preferences applied to what people read (reply
    and note text, the replacement text of a suggestion or edit), and the policy's "I assumed
    ..." stated in the first reply (or, without one, in the first suggestion or edit's note,
    else as a reply of its own) when the model did not say it."""
    out = []
    for action in actions:
        action = dict(action)
        kind = action.get("kind")
        if kind in ("reply", "note", "suggest", "edit") and isinstance(action.get("text"), str):
            action["text"] = enforce(str(action["text"]), prefs)
        if kind in ("suggest", "edit") and isinstance(action.get("replace"), str):
            action["replace"] = enforce(str(action["replace"]), prefs)
        out.append(action)
    if assumption and not any(
        "assum" in str(a.get("text", "")).casefold() for a in out if a.get("kind") != "note"
    ):
        target = next((a for a in out if a.get("kind") == "reply"), None) or next(
            (a for a in out if a.get("kind") in ("suggest", "edit")), None
        )
        if target is not None:
            text = str(target.get("text", "")).rstrip()
            room = max_chars - len(assumption) - 2
            target["text"] = ((text[:room] + "\n\n" if text else "") + assumption)[:max_chars]
        elif len(out) < max_actions:
            insert_at = next((i for i, a in enumerate(out) if a.get("kind") == "finish"), len(out))
            out.insert(insert_at, {"kind": "reply", "text": assumption[:max_chars]})
    for action in out:
        for key in ("text", "replace"):
            if isinstance(action.get(key), str):
                action[key] = str(action[key])[:max_chars]
    return out
