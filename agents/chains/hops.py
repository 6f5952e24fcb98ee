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
