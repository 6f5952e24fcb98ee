"""The one rough token count (about four characters a token), for when a provider reports no
usage and for budgeting prompt text. Pure: the engine, the model signals and memory's prompt
budget all count with it, so they agree (an empty text is 0 tokens)."""

from __future__ import annotations


def tokens_for_chars(chars: int) -> int:
    """``estimate_tokens`` for a text of ``chars`` characters."""
    return (max(0, chars) + 3) // 4


def estimate_tokens(text: str) -> int:
    return tokens_for_chars(len(text))
