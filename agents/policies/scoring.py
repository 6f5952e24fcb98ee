"""Numbers shared by the policies: agreement and entropy over sampled interpretations, and the
probability that the best guess for a slot is right."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from agents.policies.base import Interpretation, SlotSource, SlotState

# p(a template default is what the person wants), when nothing else is known.
DEFAULT_PRIOR = 0.6

# Sampled interpretations that leave a slot empty vote for this placeholder.
MISSING = "\u2205"


def normalise_value(value: str) -> str:
    """Compare sampled values case- and space-insensitively ("Lisbon " == "lisbon")."""
    return " ".join(value.casefold().split())


def slot_votes(interpretations: Sequence[Interpretation], slot: str) -> Counter[str]:
    """How many interpretations give each (normalised) value of `slot`; empty ones vote MISSING."""
    votes: Counter[str] = Counter()
    for interpretation in interpretations:
        raw = interpretation.values.get(slot)
        votes[normalise_value(raw) if raw and raw.strip() else MISSING] += 1
    return votes


def normalised_entropy(votes: Counter[str]) -> float:
    """Shannon entropy of the vote shares divided by log(k), k = number of votes: in [0, 1].

    0 when every sample agrees, 1 when every sample gives a different value.
    """
    total = sum(votes.values())
    if total < 2:
        return 0.0
    entropy = -sum((n / total) * math.log(n / total) for n in votes.values() if n)
    return min(1.0, entropy / math.log(total))


def slot_entropy(interpretations: Sequence[Interpretation], slot: str) -> float:
    return normalised_entropy(slot_votes(interpretations, slot))


def modal_value(interpretations: Sequence[Interpretation], slot: str) -> tuple[str, float] | None:
    """The most frequent non-empty sampled value of `slot` (original spelling) and its share."""
    if not interpretations:
        return None
    votes = slot_votes(interpretations, slot)
    votes.pop(MISSING, None)
    if not votes:
        return None
    best, count = max(votes.items(), key=lambda item: (item[1], item[0]))
    for interpretation in interpretations:
        raw = interpretation.values.get(slot)
        if raw and normalise_value(raw) == best:
            return raw.strip(), count / len(interpretations)
    return None  # pragma: no cover - best always comes from some interpretation


def distinct_values(interpretations: Sequence[Interpretation], slot: str) -> tuple[str, ...]:
    """The distinct sampled values of `slot`, most frequent first (original spelling)."""
    votes = slot_votes(interpretations, slot)
    votes.pop(MISSING, None)
    spelled: dict[str, str] = {}
    for interpretation in interpretations:
        raw = interpretation.values.get(slot)
        if raw and raw.strip():
            spelled.setdefault(normalise_value(raw), raw.strip())
    return tuple(spelled[v] for v, _ in votes.most_common())


def sampled_slot_names(interpretations: Sequence[Interpretation]) -> tuple[str, ...]:
    """Every slot any interpretation fills, in first-seen order (free-form tasks)."""
    names: dict[str, None] = {}
    for interpretation in interpretations:
        for name in interpretation.values:
            names.setdefault(name, None)
    return tuple(names)


def best_guess(slot: SlotState, interpretations: Sequence[Interpretation] = ()) -> SlotState:
    """The slot with its best guessed value, `confidence` = p(that guess is right).

    Answered slots (request, chat, document, memory) are returned as they are. Otherwise the
    candidates are: the value already present (model extraction, with its confidence), the
    template default (prior DEFAULT_PRIOR: the template's author chose it as the most common
    answer), and the modal value
    of the sampled interpretations (prior = its share of the samples; when it agrees with the
    extracted value the larger of the two counts). The most probable candidate wins; with no
    candidate the value stays empty and p is 1/number of choices, or 0.1 (a blind guess).
    """
    if slot.answered:
        return slot
    spec = slot.spec
    choice_prior = 1.0 / len(spec.choices) if spec.choices else 0.0
    candidates: list[tuple[float, str, SlotSource]] = []
    if slot.value is not None and slot.source != "default":
        candidates.append((slot.confidence, slot.value, slot.source or "model"))
    default = spec.default if spec.default is not None else slot.value
    if default is not None:
        candidates.append((DEFAULT_PRIOR, default, "default"))
    modal = modal_value(interpretations, spec.name)
    if modal is not None:
        value, share = modal
        for index, (p, other, source) in enumerate(candidates):
            if _same(other, value):
                candidates[index] = (max(p, share), other, source if p >= share else "model")
                break
        else:
            candidates.append((share, value, "model"))
    if not candidates:
        # Optional slots can be left to the agent's judgement: a coin flip, not a blind guess.
        blind = choice_prior if spec.choices else 0.1 if spec.required else 0.5
        return SlotState(spec=spec, value=None, source=None, confidence=blind)
    p, value, source = max(candidates, key=lambda c: c[0])
    return SlotState(spec=spec, value=value, source=source, confidence=max(0.0, min(1.0, p)))


def guess_probability(slot: SlotState, interpretations: Sequence[Interpretation] = ()) -> float:
    """p(the value we would act on for this slot is right). Answered slots: their confidence,
    at least 0.9 for chat, document and memory (the person said so); see `best_guess`."""
    if slot.answered:
        floor = 0.0 if slot.source == "request" else 0.9
        return max(floor, min(1.0, slot.confidence or 0.9))
    return best_guess(slot, interpretations).confidence


def _same(a: str, b: str) -> bool:
    return normalise_value(a) == normalise_value(b)


# "Ask me less / more", kept in memory, moves every threshold and question cost the same way.
THRESHOLD_SHIFT: dict[str, float] = {"less": 0.15, "normal": 0.0, "more": -0.15, "never": 1.0}
QUESTION_COST_FACTOR: dict[str, float] = {"less": 2.0, "normal": 1.0, "more": 0.5, "never": 10.0}


def shifted(threshold: float, preference: str) -> float:
    """A 0-1 asking threshold after the person's preference (higher = asks less)."""
    return max(0.0, min(1.0, threshold + THRESHOLD_SHIFT.get(preference, 0.0)))
