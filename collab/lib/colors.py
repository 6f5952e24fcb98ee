"""Stable presence colours: the same person or agent gets the same colour on every page.

Used for remote cursors and the presence list of the document editor (y-websocket awareness
``user.color``). Agents that join a document's awareness should use ``presence_color`` too.
"""

from __future__ import annotations

import hashlib

# Distinct, readable on white, and legible as a caret label background with white text.
PALETTE = (
    "#2f6fde",
    "#d1495b",
    "#2a9d8f",
    "#8e44ad",
    "#e07a1f",
    "#1f8a3b",
    "#c2185b",
    "#00838f",
    "#6d4c41",
    "#5c6bc0",
    "#ad8500",
    "#455a64",
)


def presence_color(key: str) -> str:
    """A colour from ``PALETTE`` chosen by a stable hash of ``key`` (e.g. ``"user:12"``)."""
    digest = hashlib.sha256(key.encode()).digest()
    return PALETTE[int.from_bytes(digest[:4], "big") % len(PALETTE)]
