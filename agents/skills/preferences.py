"""A preference said in the chat ("I prefer bullet points and British spelling"), each part
read by the memory's own extractor and acknowledged in plain words, once (issue 27)."""

from __future__ import annotations

import re

from agents.memory.told import preference_parts
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
_MENTION = re.compile(r"(?<!\w)@[\w.-]+[,:]?\s*")


def stated_preferences(request: str) -> list[tuple[str, str]]:
    """The (key, value) preferences a request states, one per part: "I prefer bullet points and
    British spelling" gives list_style=bullets and spelling=british; "bullet the key points"
    asks for work and states none (``agents.memory.told``, which keeps what it reads)."""
    text = _MENTION.sub("", request).strip()
    parts = preference_parts(text)
    return [(read.key, read.value) for _, read in parts if (read.key, read.value) in _SAID]


def acknowledgement(request: str) -> str:
    """ "Noted: bullet points and British spelling." — what was understood, nothing more."""
    said = [_SAID[p] for p in stated_preferences(request)]
    return f"Noted: {and_list(said)}." if said else "Noted."
