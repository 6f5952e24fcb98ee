"""The guards of a chain of agents addressing agents (issue 30): deterministic, outside any
model, so that nothing an agent writes can argue its way past them.

``check`` is the one entry point: the hops of the chain since a person last wrote (its window),
the hop about to start, and the limits; it returns ``None`` (the hop may start) or the ``Trip``
that stops the chain, saying which guard and why. The guards, in the order they are checked:

* the hop budget: at most ``budget`` hops per window (a person's message opens a new window);
* the per-agent rate limit: at most ``rate`` sends by one agent within ``rate_seconds`` (one
  reply addressing several agents is one send);
* the loop detector: the same error coming back, the same kind of hop with the same content
  coming back (wording normalised: case, punctuation, numbers, whitespace, @names, small
  edits), or two agents alternating A-B-A-B.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import timedelta

from agents.chains.hops import ERROR, HopRecord

BUDGET = "hop budget"
RATE = "rate limit"
LOOP = "loop detector"

# Two wordings at least this close are the same content (difflib ratio, or the share of
# distinct words they have in common).
SIMILAR_RATIO = 0.88
SIMILAR_TOKENS = 0.8
ALTERNATION = 4  # A-B-A-B: hops in a row between the same two agents, each to the other

_MENTION = re.compile(r"@[\w-]+")
_NUMBER = re.compile(r"\d+(?:[.,:/-]\d+)*")
_PUNCTUATION = re.compile(r"[^\w\s#]|_")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class Limits:
    budget: int  # hops per window
    rate: int  # sends per agent per ``rate_seconds``
    rate_seconds: float


@dataclass(frozen=True)
class Trip:
    """Why a guard stops the chain: ``guard`` names it, ``reason`` says why in a sentence."""

    guard: str
    reason: str


def normalise(text: str) -> str:
    """``text`` as the loop detector compares it: lower case, @names, numbers and punctuation
    folded, whitespace collapsed ("@Bee: check section 2!" and "@ace check  section 3" are the
    same)."""
    text = _MENTION.sub(" @ ", text.lower())
    text = _NUMBER.sub(" # ", text)
    text = _PUNCTUATION.sub(" ", text)
    return _SPACE.sub(" ", text).strip()


def similar(a: str, b: str) -> bool:
    """Whether two wordings say the same thing, small edits aside."""
    left, right = normalise(a), normalise(b)
    if left == right:
        return True
    if difflib.SequenceMatcher(None, left, right, autojunk=False).ratio() >= SIMILAR_RATIO:
        return True
    words_left, words_right = set(left.split()) - {"@", "#"}, set(right.split()) - {"@", "#"}
    if len(words_left) < 3 or len(words_right) < 3:
        return False
    shared = len(words_left & words_right) / len(words_left | words_right)
    return shared >= SIMILAR_TOKENS


def over_budget(window: Sequence[HopRecord], limits: Limits) -> Trip | None:
    if len(window) < limits.budget:
        return None
    return Trip(
        BUDGET,
        f"{len(window)} hops since a person last wrote, and the budget is {limits.budget}",
    )


def over_rate(window: Sequence[HopRecord], candidate: HopRecord, limits: Limits) -> Trip | None:
    since = candidate.at - timedelta(seconds=limits.rate_seconds)
    sends = {
        hop.source
        for hop in window
        if hop.sender == candidate.sender and hop.at > since and hop.source != candidate.source
    }
    if len(sends) < limits.rate:
        return None
    return Trip(
        RATE,
        f"this agent already addressed other agents {len(sends)} times within "
        f"{limits.rate_seconds:g} seconds (at most {limits.rate})",
    )


def repeated_error(window: Sequence[HopRecord], candidate: HopRecord) -> Trip | None:
    if candidate.kind != ERROR:
        return None
    earlier = [hop for hop in window if hop.source != candidate.source]
    if any(hop.kind == ERROR and similar(hop.text, candidate.text) for hop in earlier):
        return Trip(LOOP, "the same error came back")
    return None


def repeated_content(window: Sequence[HopRecord], candidate: HopRecord) -> Trip | None:
    if candidate.kind == ERROR:
        return None
    for hop in window:
        if hop.source == candidate.source:
            continue  # the same message addressing several agents
        if hop.kind == candidate.kind and similar(hop.text, candidate.text):
            return Trip(LOOP, f"the same {candidate.kind} came back, worded a little differently")
    return None


def alternating(window: Sequence[HopRecord], candidate: HopRecord) -> Trip | None:
    """The last ``ALTERNATION`` hops, the candidate included, go back and forth between the
    same two agents."""
    recent = [*window[-(ALTERNATION - 1) :], candidate]
    if len(recent) < ALTERNATION:
        return None
    first, second = recent[0].sender, recent[0].receiver
    if first == second:
        return None
    for n, hop in enumerate(recent):
        expected = (first, second) if n % 2 == 0 else (second, first)
        if (hop.sender, hop.receiver) != expected:
            return None
    return Trip(LOOP, f"two agents have been passing the work back and forth {len(recent)} times")


def check(window: Sequence[HopRecord], candidate: HopRecord, limits: Limits) -> Trip | None:
    """The first guard the ``candidate`` hop trips, or None: it may start."""
    return (
        over_budget(window, limits)
        or over_rate(window, candidate, limits)
        or repeated_error(window, candidate)
        or repeated_content(window, candidate)
        or alternating(window, candidate)
    )
