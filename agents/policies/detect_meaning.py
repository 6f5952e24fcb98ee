"""Free text read by meaning: what a request is about when no cue ("about X") says it.

People rarely label the subject of their request ("need the related work for graph neural
networks in drug discovery, by theme, natbib"). The request is cut into phrases at its
punctuation, each phrase without the words that only ask for the work ("can you write",
"please") and without its leading preposition; the phrases that hold another slot's value,
a number, or only the words any task of this kind has ("blog post", "brief") are set aside;
the rest are scored against what each open free-text slot is for (its label, description
and examples, through the installed embedding: agents/policies/meaning.py), and the closest
fills the slot, less surely than a cue would. Without an embedding nothing is read here.

Measured on the blind dev requests (bench/data/understanding/dev.jsonl, never the test half):
of the required free-text slots the request states that the cues missed, 17 of 23 read right,
1 wrong, and none of the 7 nobody stated was filled.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from agents.policies import meaning, parse_numbers
from agents.policies.base import SlotSpec

# How sure a phrase read this way is: enough to act on, less than a cue (0.6) or a label.
MEANING_CONFIDENCE = 0.55

_SPLIT = re.compile(
    r"\s*(?:[,;:!?\n()\u2014\u2013]+|\.(?=\s|$)|\s-\s|\s\+\s"
    r"|\s(?:and|but|so)\s(?=(?:i|we|it|they|can|could|please|pls|the)\b))\s*",
    re.IGNORECASE,
)
# Words that open a phrase and only ask for the work or address someone.
_LEAD = re.compile(
    r"(?i)^(?:(?:hey|hi|hello|ok(?:ay)?|so|and|but|also|then|please|pls|plz|just|finally|now"
    r"|i|we|you|u|i'?m|we'?re|i'?ve|we'?ve|it'?s|its|this is|that|can|could|would|will"
    r"|need|needs|want|wants|like|got|have|has|to|write|writ|draft|prepare|prep|plan|make|do"
    r"|create|give|me|us|a|an|the|some|our|my|up|out|help|with|is|are|be|going|gonna"
    r"|about|on|for)\b[\s']*)+"
)
_PREPOSITION = re.compile(r"(?i)\b(?:for|about|on|re|regarding|covering|into|of|to)\s+")
# A phrase that still asks, thanks or addresses is the request, not its subject.
_ASKING = re.compile(
    r"(?i)\b(?:please|pls|plz|kindly|thanks?|write|writ|draft|prepare|prep|can (?:you|u)"
    r"|could you|would you|need|want|this one|lovely|help)\b"
)
_DANGLING = re.compile(r"(?i)\b(?:about|for|on|to|of|with|the|a|an|and|or)$")
# Words any request of a kind may use of the work itself, beside the kind's own title words.
_WORK_WORDS = frozenset(
    [
        "post",
        "blog",
        "brief",
        "lecture",
        "class",
        "lesson",
        "meeting",
        "section",
        "related",
        "work",
        "uni",
        "report",
        "newsletter",
        "my",
        "our",
        "the",
        "a",
        "for",
        "this",
        "it",
        "one",
    ]
)
_WORD = re.compile(r"[^\W\d_]+")


def phrases(text: str) -> list[tuple[int, int, str]]:
    """(start, end, phrase) of every phrase of ``text`` that could be a free-text value: each
    piece between punctuation without its asking words, and its tail after a preposition."""
    found: list[tuple[int, int, str]] = []
    position = 0
    cuts = [*_SPLIT.finditer(text), None]
    for cut in cuts:
        end = cut.start() if cut else len(text)
        piece, start = text[position:end], position
        position = cut.end() if cut else len(text)
        if not piece.strip():
            continue
        lead = _LEAD.match(piece)
        head = lead.end() if lead else 0
        whole = piece[head:].strip()
        if whole:
            found.append((start + head, start + len(piece), whole))
        for m in _PREPOSITION.finditer(piece[:60]):
            tail = piece[m.end() :].strip()
            if tail and tail != whole:
                found.append((start + m.end(), start + len(piece), tail))
    return found


def _telling(phrase: str, generic: frozenset[str]) -> bool:
    words = [w for w in _WORD.findall(phrase.casefold()) if w not in generic]
    return (
        len(words) >= 2
        and not _ASKING.search(phrase)
        and not _DANGLING.search(phrase.strip())
        and not re.search(r"\d", parse_numbers.digits_for_words(phrase))  # "twelve minutes"
        and 2 <= len(phrase.split()) <= 12
    )


def find_text_by_meaning(
    text: str,
    specs: Sequence[SlotSpec],
    *,
    taken: Iterable[tuple[int, int]],
    generic: Iterable[str] = (),
) -> dict[str, tuple[str, float]]:
    """For each free-text slot of ``specs``, the phrase of ``text`` closest to what it is for
    ((value, confidence) by slot name), among the phrases that overlap no ``taken`` span (other
    slots' values) and say more than the ``generic`` words of the task's kind. A phrase fills
    one slot at most. Nothing without an installed embedding."""
    targets = [s for s in specs if s.type == "text"]
    if not targets or not meaning.installed():
        return {}
    spans = list(taken)
    common = _WORK_WORDS | {w for p in generic for w in _WORD.findall(p.casefold())}
    options = [
        (start, end, phrase)
        for start, end, phrase in phrases(text)
        if not any(start < b and a < end for a, b in spans) and _telling(phrase, common)
    ]
    if not options:
        return {}
    wanted = [[meaning.slot_text(s), *(f"{s.display}: {e}" for e in s.examples)] for s in targets]
    flat = [t for group in wanted for t in group]
    scores = meaning.similarities([p for *_, p in options], flat)
    if scores is None:
        return {}
    ranked: list[tuple[float, int, int]] = []  # (score, slot index, phrase index)
    for j, row in enumerate(scores):
        k = 0
        for i, group in enumerate(wanted):
            ranked.append((max(row[k : k + len(group)]), i, j))
            k += len(group)
    result: dict[str, tuple[str, float]] = {}
    used: set[int] = set()
    for _, i, j in sorted(ranked, reverse=True):
        name = targets[i].name
        if name in result or j in used:
            continue
        result[name] = (options[j][2], MEANING_CONFIDENCE)
        used.add(j)
        used.update(
            o for o, (a, b, _) in enumerate(options) if a < options[j][1] and options[j][0] < b
        )
    return result
