"""What a hop is: one agent addressing another in the chat, typed by deterministic rules on
what the agent did and said (never by asking a model)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

HANDOFF = "handoff"
REVIEW = "review"
ANSWER = "answer"
QUESTION = "question"
ERROR = "error"
KINDS = (HANDOFF, REVIEW, ANSWER, QUESTION, ERROR)

_REVIEW_CUES = re.compile(
    r"\b(review|reviews|reviewing|check|checks|double-check|verify|proofread|look over|"
    r"look at|sanity[- ]check|audit)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class HopRecord:
    """One hop as the guards see it: who addressed whom, how, saying what, and when."""

    sender: int  # the addressing agent's id
    receiver: int  # the addressed agent's id
    kind: str
    text: str
    at: datetime
    source: int  # the message (or failed turn) it came from: one send may address several


def classify_hop(*, text: str, asked: bool, answering: int | None, receiver: int) -> str:
    """The type of a hop: an ``ask`` action is a question (for people: it pauses the chain);
    a reply to the agent whose question or review request started this turn is its answer; a
    request to check something is a review request; a reply asking something, a question;
    anything else hands the work over."""
    if asked:
        return QUESTION
    if answering is not None and answering == receiver:
        return ANSWER
    if _REVIEW_CUES.search(text):
        return REVIEW
    if text.rstrip().endswith("?"):
        return QUESTION
    return HANDOFF


_DELEGATED = re.compile(
    r"\b(?:ask|have|get|tell|let|then)\s+@([A-Za-z][A-Za-z0-9_-]{0,31})"
    r"|\b(?:hand|pass|send|give)\s+(?:it|this|that|the draft)?\s*(?:over\s+)?to\s+"
    r"@([A-Za-z][A-Za-z0-9_-]{0,31})",
    re.IGNORECASE,
)
_FIRST_MENTION = re.compile(r"(?<![\w@])@[A-Za-z]")


def delegated_names(body: str) -> dict[str, str]:
    """The @names a person's message asks the agent it addresses first to hand over to ("@Writer
    draft it and ask @Reviewer to check it": Reviewer), lower case to the name as written. Only
    after an earlier @name: "ask @Reviewer ..." alone addresses the Reviewer."""
    first = _FIRST_MENTION.search(body)
    if first is None:
        return {}
    found = {}
    for match in _DELEGATED.finditer(body, first.end()):
        name = match[1] or match[2]
        found[name.lower()] = name
    return found
