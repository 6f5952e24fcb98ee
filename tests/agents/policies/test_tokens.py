"""One token estimate: the engine, the model signals and memory's prompt budget agree."""

from __future__ import annotations

from agents.engine import calls as decide
from agents.memory import selectors as memory_selectors
from agents.policies import signals
from agents.policies.tokens import estimate_tokens, tokens_for_chars


def test_an_empty_text_is_no_tokens_and_each_started_four_characters_is_one() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 1
    assert estimate_tokens("abcde") == 2
    assert tokens_for_chars(9) == 3


def test_every_caller_counts_with_the_same_function() -> None:
    assert signals.estimate_tokens is estimate_tokens
    assert memory_selectors.estimate_tokens is estimate_tokens
    assert decide.estimate_tokens is estimate_tokens
