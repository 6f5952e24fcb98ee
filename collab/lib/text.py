"""Text that can be stored: what every database (PostgreSQL ``text`` above all) and every
encoder accepts. Framework-free."""

from __future__ import annotations

import re

# NUL (PostgreSQL text cannot hold it) and UTF-16 surrogates, which appear in a Python str only
# when JSON escapes one half of a pair ("\ud83d") and which UTF-8 cannot encode.
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def unstorable_reason(value: str) -> str | None:
    """Why ``value`` cannot be stored, or None when it can."""
    match = _UNSTORABLE.search(value)
    if match is None:
        return None
    if match.group() == "\x00":
        return "Contains a NUL character (U+0000), which cannot be stored."
    return (
        f"Contains half of a UTF-16 surrogate pair (U+{ord(match.group()):04X}) at position "
        f"{match.start()}: send the whole character."
    )


# What must never reach a label people read: C0 and C1 controls (and DEL), the bidirectional
# controls that reorder what follows (U+061C, U+200E/F, U+202A-U+202E, U+2066-U+2069: a
# right-to-left override turns "alice" into something else on screen), and lone surrogates.
_NOT_DISPLAYABLE = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def displayable(value: str) -> str:
    """``value`` without control, bidirectional-control and lone-surrogate characters, with
    surrounding whitespace stripped: for names shown next to other people's."""
    return _NOT_DISPLAYABLE.sub("", value).strip()
