"""A preference said in the chat ("I prefer bullet points and British spelling"), each part
read by the memory's own extractor and acknowledged in plain words, once (issue 27)."""

from __future__ import annotations

import re

from agents.memory.extractors import PREFERENCE, structure
from agents.skills.write import and_list

# How each stored value is said back ("list_style: bullets" -> "bullet points").
_SAID = {
    ("list_style", "bullets"): "bullet points",
    ("list_style", "numbered"): "numbered lists",
    ("list_style", "prose"): "prose rather than lists",
    ("spelling", "british"): "British spelling",
    ("spelling", "american"): "American spelling",
    ("length", "short"): "short answers",
    ("length", "medium"): "answers of medium length",
    ("length", "long"): "long, detailed answers",
    ("tone", "formal"): "a formal tone",
    ("tone", "casual"): "a casual tone",
    ("tone", "friendly"): "a friendly tone",
    ("date_format", "iso"): "dates as 2027-03-04",
    ("date_format", "day_month_year"): "dates as 4 March 2027",
    ("date_format", "month_day_year"): "dates as March 4, 2027",
    ("headings", "yes"): "headings",
    ("headings", "no"): "no headings",
    ("bold_numbers", "yes"): "key numbers in bold",
    ("bold_numbers", "no"): "no bold numbers",
}
_CLAUSES = re.compile(r"\s*(?:[,;]|\band\b|\balso\b|\bplus\b)\s*", re.IGNORECASE)
_MENTION = re.compile(r"(?<!\w)@[\w.-]+[,:]?\s*")
# A preference is said by someone about themselves or as a standing rule ("I prefer ...",
# "we use British spelling", "always ...", "please use ..."), not by an order for one piece
# of work ("bullet the key points").
_SPEAKS_FOR_ITSELF = re.compile(
    r"(?i)\b(?:i|i'?d|i'?m|we|we'?d|me|my|our|us|prefer|prefers|preferably|always|never|"
    r"from now on|in future|going forward|by default)\b|^\s*(?:please\s+)?(?:use|keep|write in)\b"
)


def stated_preferences(request: str) -> list[tuple[str, str]]:
    """The (key, value) preferences a request states, one per part: "I prefer bullet points and
    British spelling" gives list_style=bullets and spelling=british. A part after the first
    is read as continuing it ("... and British spelling": "I prefer British spelling")."""
    text = _MENTION.sub("", request).strip()
    if not _SPEAKS_FOR_ITSELF.search(text):
        return []  # "bullet the key points" asks for work; it states no preference
    found: dict[str, str] = {}
    for index, clause in enumerate(c for c in _CLAUSES.split(text) if c.strip()):
        read = structure(clause)
        if read is None and index and found:
            read = structure(f"I prefer {clause}")
        if read is None or read.kind != PREFERENCE or (read.key, read.value) not in _SAID:
            continue
        found.setdefault(read.key, read.value)
    return list(found.items())


def acknowledgement(request: str) -> str:
    """ "Noted: bullet points and British spelling." — what was understood, nothing more."""
    said = [_SAID[p] for p in stated_preferences(request)]
    return f"Noted: {and_list(said)}." if said else "Noted."
