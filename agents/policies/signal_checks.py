"""Model signals checked against what the detectors read, so that a signal can only help.

A model's ambiguity rating or sampled readings that contradict a value the detectors read with
high confidence (stated by the request, the chat, the document or memory, read at least
`DETECTOR_TRUST` sure, neither contradicted nor with several readings) are not believed:

- a slot the judge calls unclear is dropped from its `unclear_slots`;
- a rating whose every named unclear slot was dropped is ignored altogether (it is about
  nothing the detectors left open);
- a rating that is not a number in [0, 1] is ignored;
- a sampled reading's value for such a slot that reads as another value is dropped from that
  reading (so the readings disagree only where the text leaves room); a value that does not
  read as the slot's type at all is no contradiction and stays.

What was ignored, and why, is returned as readable lines for the turn's record
(`Situation.ignored_signals`). Signals that fail to parse or time out never get here: the
engine turns them into no signal (agents/engine/signals.py). Pure Python, no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import date

from agents.policies.base import Interpretation, Signals, SlotSpec, SlotState
from agents.policies.detect import normalise
from agents.policies.situation_sources import match_spec, same

# A detector reading at least this sure is not overruled by a model signal.
DETECTOR_TRUST = 0.8
_ANSWERS = ("request", "chat", "document", "memory")


def sure_values(slots: Iterable[SlotState], unsure: Iterable[str]) -> dict[str, str]:
    """Slot name -> value for the slots the detectors read with high confidence from what
    someone stated, leaving out those with a conflict or several readings."""
    open_names = set(unsure)
    return {
        s.name: s.value
        for s in slots
        if s.source in _ANSWERS
        and s.value
        and s.confidence >= DETECTOR_TRUST
        and s.name not in open_names
    }


def screen_signals(
    signals: Signals,
    slots: Iterable[SlotState],
    *,
    unsure: Iterable[str] = (),
    today: date,
) -> tuple[Signals, tuple[str, ...]]:
    """The signals a policy may believe, and a line per thing ignored."""
    states = tuple(slots)
    specs = [s.spec for s in states]
    sure = sure_values(states, unsure)
    ignored: list[str] = []

    ambiguity = signals.ambiguity
    unclear = signals.unclear_slots
    if ambiguity is not None and not (math.isfinite(ambiguity) and 0.0 <= ambiguity <= 1.0):
        ignored.append(f"ambiguity rating {ambiguity!r}: not a number in [0, 1]")
        ambiguity = None
    if ambiguity is not None and unclear:
        kept = []
        for name in unclear:
            spec = match_spec(name, specs)
            if spec is not None and spec.name in sure:
                ignored.append(
                    f"ambiguity: the model called {spec.name} unclear, "
                    f"the detectors read {sure[spec.name]}"
                )
            else:
                kept.append(name)
        unclear = tuple(kept)
        if not kept:
            ignored.append(
                f"ambiguity rating {ambiguity:.2f}: every slot it named is stated plainly"
            )
            ambiguity = None
    if ambiguity is None:
        signals = replace(
            signals, ambiguity=None, ambiguity_reason="", unclear_slots=(), suggested_question=""
        )
    else:
        signals = replace(signals, unclear_slots=unclear)

    readings, dropped = _screen_readings(signals.interpretations, specs, sure, today)
    ignored += [
        f"sampled readings: {name} = {value}, the detectors read {sure[name]}"
        for name, value in dropped.items()
    ]
    return replace(signals, interpretations=readings), tuple(ignored)


def _screen_readings(
    readings: Iterable[Interpretation],
    specs: Sequence[SlotSpec],
    sure: Mapping[str, str],
    today: date,
) -> tuple[tuple[Interpretation, ...], dict[str, str]]:
    dropped: dict[str, str] = {}
    kept: list[Interpretation] = []
    for reading in readings:
        values: dict[str, str] = {}
        for name, value in reading.values.items():
            spec = match_spec(name, specs)
            if spec is None or spec.name not in sure or not value.strip():
                values[name] = value
                continue
            read = normalise(value, spec, today=today)
            if read is None or same(read, sure[spec.name]):  # unreadable: no contradiction
                values[name] = value
            else:
                dropped.setdefault(spec.name, read)
        kept.append(Interpretation(summary=reading.summary, values=values))
    return tuple(kept), dropped
