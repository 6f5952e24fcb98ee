"""A share of an amount: "how much per head if all 32 come?", "how much is the Airbnb each?",
"target per volunteer?" (pure Python, no Django).

The amount is the one the request names, else the one on the task's line that shares a word
with the request ("Stay: Airbnb in Ribeira, €540 total"), else the budget; the count is the one
the request gives ("all 32"), else the task's count of the thing asked per ("12 volunteers"),
else, per head or each, the task's count of people ("four friends"). Both are quoted back with
the sum, said as worked out, so nothing is a fact the task did not give; without both, no
figure.
"""

from __future__ import annotations

import re

from agents.policies.parse_money import find_money
from agents.policies.parse_numbers import digits_for_words
from agents.skills.amounts import amount as worked_out
from agents.skills.amounts import count_of, split_amount
from agents.skills.facts import TaskFacts
from agents.skills.notes import note_lines
from agents.skills.quote import content_words
from agents.skills.work import SkillAnswer
from agents.skills.write import finish, say_money

ASKS_A_SHARE = re.compile(
    r"(?i)\bper\s+(?:head|person|people|pax|guest|member|\w+)\b|\beach\b|\bsplit\b|"
    r"\ba head\b|\bapiece\b"
)
_PER_PEOPLE = re.compile(r"(?i)\bper\s+(?:head|person|people|pax)\b|\beach\b|\ba head\b|\bapiece")
_PEOPLE = (
    r"people|persons|friends|guests|members|attendees|travell?ers|adults|volunteers|staff|"
    r"players|students|kids|children|participants|of us|colleagues|employees"
)


def _amount(facts: TaskFacts, request: str) -> tuple[str, str] | None:
    """(canonical amount, the words it was read from)."""
    own = find_money(request)
    if own:
        return own[0].value, own[0].text
    asked = content_words(request) - {"much", "each", "per", "head", "person", "cost"}
    lines = [facts.goal, *note_lines(facts.document), *facts.chat]
    best: tuple[int, str, str] | None = None
    for line in lines:
        found = find_money(line)
        shared = len(asked & content_words(line))
        if found and shared and (best is None or shared > best[0]):
            best = (shared, found[0].value, line.strip()[:120])
    if best is not None:
        return best[1], best[2]
    budget = next(iter(facts.of_type("money")), None)
    return (budget.raw, budget.evidence or budget.raw) if budget is not None else None


def _count(facts: TaskFacts, request: str) -> tuple[int, str] | None:
    """(count, the words it was read from)."""
    asked = digits_for_words(request)
    money = find_money(asked)
    for own in re.finditer(r"\b(\d{1,5})\b(?![%.,]\d)", asked):
        if int(own[1]) > 1 and not any(m.start <= own.start() < m.end for m in money):
            return int(own[1]), own[0]  # "if all 32 come"
    stated = digits_for_words(facts.stated)
    per = re.search(r"(?i)\bper\s+([^\W\d_]{3,})", request)
    if per is not None and not _PER_PEOPLE.search(request):
        return count_of(per[1], stated)
    hit = re.search(rf"(?i)\b(\d{{1,5}})\s+(?:[^\W\d_]+\s+)?(?:{_PEOPLE})\b", stated)
    if hit is not None and int(hit[1]) > 1:
        return int(hit[1]), hit[0]
    people = next((v for v in facts.known if v.unit in ("people", "travelers") and v.raw), None)
    if people is not None and people.raw.isdigit() and int(people.raw) > 1:
        return int(people.raw), people.evidence or people.raw
    return None


def share(facts: TaskFacts, request: str) -> SkillAnswer | None:
    """The share, worked out and said as such; None when the task lacks the amount or the
    count (the caller answers the question another way)."""
    amount, count = _amount(facts, request), _count(facts, request)
    if amount is None or count is None:
        return None
    total = split_amount(amount[0])
    if total is None:
        return None
    shown = worked_out(total[0], total[1] / count[0])
    per = "per person" if _PER_PEOPLE.search(request) else "each"
    noun = re.search(r"(?i)\bper\s+([^\W\d_]{3,})", request)
    if noun is not None and not _PER_PEOPLE.search(request):
        per = f"per {noun[1].casefold()}"
    text = (
        f"About {shown} {per}: {say_money(amount[0])} (“{amount[1]}”) divided by {count[0]} "
        f"(“{count[1]}”), worked out from the task."
    )
    return SkillAnswer("share", finish(text, facts.prefs))
