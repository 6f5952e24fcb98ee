from __future__ import annotations

import pytest

from agents.evaluation.checks import CheckError, describe, list_style, passes, words

DOC = """# Trip plan

## Summary

A relaxed week in Lisbon.

1. Organise the first day around the old town centre.
2. Pick a favourite cafe.

Owner: Ana
"""


@pytest.mark.parametrize(
    ("check", "expected"),
    [
        ({"type": "regex", "pattern": r"(?m)^Owner: Ana$"}, True),
        ({"type": "regex", "pattern": r"(?m)^Owner: Ben$"}, False),
        ({"type": "contains", "text": "lisbon"}, True),
        ({"type": "contains", "text": "TL;DR:"}, False),
        ({"type": "not_contains", "text": "!"}, True),
        ({"type": "not_contains", "text": "cafe"}, False),
        ({"type": "word_limit", "max_words": 30}, True),
        ({"type": "word_limit", "max_words": 10}, False),
        ({"type": "heading_present", "heading": "summary"}, True),
        ({"type": "heading_present", "heading": "Budget"}, False),
        ({"type": "spelling_variant", "variant": "british"}, True),
        ({"type": "spelling_variant", "variant": "american"}, False),
        ({"type": "list_style", "style": "numbered"}, True),
        ({"type": "list_style", "style": "bullets"}, False),
    ],
)
def test_each_check_type_reads_the_document(check: dict[str, object], expected: bool) -> None:
    assert passes(check, DOC) is expected
    assert describe(check)


def test_words_ignore_markdown_marks() -> None:
    assert words("# Title\n\n- one two\n- three-four!") == 4


def test_list_style_tells_bullets_numbers_prose_and_mixed_apart() -> None:
    assert list_style("- a\n- b") == "bullets"
    assert list_style("1. a\n2) b") == "numbered"
    assert list_style("Just a paragraph.") == "none"
    assert list_style("- a\n1. b") == "mixed"


def test_american_spelling_breaks_the_british_check() -> None:
    assert not passes({"type": "spelling_variant", "variant": "british"}, "Pick a color.")
    assert passes({"type": "spelling_variant", "variant": "american"}, "Pick a color.")


def test_unknown_check_type_is_an_error() -> None:
    with pytest.raises(CheckError):
        passes({"type": "vibes"}, DOC)
