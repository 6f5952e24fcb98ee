"""The amounts and counts of a task's lines, read one way for every skill that works a figure
out (a share per head, a budget per laptop, a rate times hours; pure Python, no Django).

* ``split_amount("GBP 540")``: ("GBP", 540.0), the canonical amount ``parse_money`` reads, or
  None for anything else;
* ``amount("GBP", 135.0)``: that amount said as people read it ("135 GBP", "12.60 GBP"), for
  a figure the skill worked out;
* ``count_of(noun, text)``: the count a text gives of a thing ("8 laptops", "12 new
  volunteers"), with the words it was read from.
"""

from __future__ import annotations

import re

from agents.policies.parse_numbers import digits_for_words
from agents.skills.write import say_money

_CANONICAL = re.compile(r"([A-Z]{3})\s+([\d.]+)")


def split_amount(raw: str) -> tuple[str, float] | None:
    m = _CANONICAL.fullmatch(raw.strip())
    return (m[1], float(m[2])) if m is not None else None


def amount(currency: str, value: float) -> str:
    return say_money(f"{currency} {value:.2f}".replace(".00", ""))


def singular(noun: str) -> str:
    """ "laptops" -> "laptop", "boxes" -> "box": the noun a count is looked up by."""
    return re.sub(r"(?:es|s)$", "", noun.casefold())


def count_of(noun: str, text: str) -> tuple[int, str] | None:
    """(how many of ``noun`` the text gives, the words it says it in), numbers in words read as
    digits ("four laptops"); None when it gives none, or none above zero."""
    hit = re.search(
        rf"(?i)\b(\d{{1,5}})\s+(?:[^\W\d_]+\s+)?{re.escape(singular(noun))}(?:e?s)?\b",
        digits_for_words(text),
    )
    return (int(hit[1]), hit[0]) if hit is not None and int(hit[1]) > 0 else None
