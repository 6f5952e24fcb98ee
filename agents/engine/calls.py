"""A turn's model calls, measured and counted: every call (a signal, the model producer's
answer) is logged as a ``ModelCall`` and its tokens and cost added to the turn."""

from __future__ import annotations

import time
from typing import Any, Protocol

from django.db.models import F

from agents.models import ModelCall, ModelProfile, Turn
from agents.policies.tokens import estimate_tokens, tokens_for_chars


class Measured(Protocol):
    """What a streamed answer reports about its size (``agents.engine.stream.Streamer``)."""

    tokens_in: int | None
    tokens_out: int | None


def measure(
    call: ModelCall, streamer: Measured | None, started: float, profile: ModelProfile
) -> None:
    call.latency_ms = int((time.monotonic() - started) * 1000)
    prompt_chars = sum(len(m["content"]) for m in call.messages)
    call.tokens_in = (streamer and streamer.tokens_in) or tokens_for_chars(prompt_chars)
    call.tokens_out = (streamer and streamer.tokens_out) or estimate_tokens(call.response)
    call.cost = profile.cost(call.tokens_in, call.tokens_out)


def log_call(turn: Turn, call: ModelCall, *, fields: dict[str, Any]) -> None:
    """Log a model call that is not stored with a decision (a signal call, or a decision call
    that failed or whose turn was stopped or decided elsewhere meanwhile), and count its tokens
    on the turn."""
    call.save()
    Turn.objects.filter(pk=turn.pk).update(
        tokens_in=F("tokens_in") + call.tokens_in,
        tokens_out=F("tokens_out") + call.tokens_out,
        cost=F("cost") + call.cost,
        **fields,
    )
    turn.tokens_in += call.tokens_in
    turn.tokens_out += call.tokens_out
    turn.cost += call.cost
