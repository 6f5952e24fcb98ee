from __future__ import annotations

import pytest

from collab.lib import ytext


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("Venue: Lyon 🌧, May 3.", "Venue: 京都 ☀️ near the old town, with a garden 🌸, May 3."),
        ("", "A whole new document, typed a few words at a time 👩‍💻."),
        ("Delete all of this, please.", ""),
        ("abc" * 50, "abd" * 50),
        ("same", "same"),
    ],
)
def test_typing_steps_end_exactly_at_the_new_text(old: str, new: str) -> None:
    text = old
    groups = ytext.typing_steps(old, new, chunk_chars=8, max_steps=12)
    for group in groups:
        text = ytext.apply_steps(text, group)

    assert text == new
    assert len(groups) <= 12


def test_inserted_text_is_typed_a_few_words_per_step() -> None:
    groups = ytext.typing_steps("", "one two three four five six seven eight", chunk_chars=10)

    typed = [ytext.apply_steps("", [step]) for group in groups for step in group]
    assert typed == ["one two ", "three ", "four five ", "six seven ", "eight"]
