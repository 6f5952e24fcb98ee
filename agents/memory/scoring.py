"""The one definition of how a remembered item is ranked for a turn.

``score = relevance * weight``, where relevance (0..1) is how well the item matches the turn's
query (full text, or hybrid with meaning; scaled to the best match's), and

``weight = (C + (1 - C) · confidence) · (R + (1 - R) · recency)``,
``recency = 0.5 ^ (age in days / HALF_LIFE)``, age counted from the item's last confirmation.

The Python function and the SQL expression below are both built from these constants; the SQL
path (``search._ranked``) and the embeddings path (``embeddings``) use them, and
tests/memory/test_scoring.py checks the database computes what Python does.
"""

from __future__ import annotations

from datetime import datetime

CONFIDENCE_FLOOR = 0.5  # C: an unsure item still counts half
RECENCY_FLOOR = 0.5  # R: an old item still counts half
RECENCY_HALF_LIFE_DAYS = 30.0


def age_days(confirmed_at: datetime, now: datetime) -> float:
    return max(0.0, (now - confirmed_at).total_seconds() / 86400)


def recency(days: float) -> float:
    return float(0.5 ** (max(0.0, days) / RECENCY_HALF_LIFE_DAYS))


def weight(confidence: float, days: float) -> float:
    """How much an item's confidence and age let it count (0.25..1)."""
    return (CONFIDENCE_FLOOR + (1 - CONFIDENCE_FLOOR) * confidence) * (
        RECENCY_FLOOR + (1 - RECENCY_FLOOR) * recency(days)
    )


def score(*, relevance: float, confidence: float, confirmed_at: datetime, now: datetime) -> float:
    return relevance * weight(confidence, age_days(confirmed_at, now))


def weight_sql(confidence: str, days: str) -> str:
    """``weight`` as an SQL expression over the expressions ``confidence`` and ``days`` (both
    engines have ``POWER``: see ``apps._sqlite_math``)."""
    return (
        f"({CONFIDENCE_FLOOR!r} + {1 - CONFIDENCE_FLOOR!r} * {confidence}) * "
        f"({RECENCY_FLOOR!r} + {1 - RECENCY_FLOOR!r} * "
        f"POWER(0.5, ({days}) / {RECENCY_HALF_LIFE_DAYS!r}))"
    )
