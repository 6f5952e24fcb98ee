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
