"""Model signals for the clarification policies, computed by the turn engine.

A policy that reads model signals gets them from structured calls to the agent's own model
(``agents/llm/``), and only those it reads:

===================== =================================================== ====================
policy                calls (purpose of the ModelCall)                    gives
===================== =================================================== ====================
never, ask_once,      none                                                text detection only
ask_when_blocked
llm_judge             1 ``signals:ambiguity`` (AmbiguityRating)            ``ambiguity`` ...
intent_sampling       k ``signals:sample`` (InterpretationOut, T >= 0.8),  ``interpretations``
                      or 1 (Interpretations) for the embedded model
value_of_information  1 ``signals:extract`` (SlotExtraction) + samples     extraction, samples
bandit                extraction + samples + 1 ambiguity (a feature)      all three
===================== =================================================== ====================

Each call is logged as a ``ModelCall`` (purpose, prompt, answer, tokens, latency, cost, error)
and counted in the turn's tokens and cost. A model failure, a timeout or an answer that is not
valid JSON for its schema gives no signal (the policy then falls back to what the text shows)
and is recorded on its ModelCall; it never fails the turn. The prompt-and-parse call itself is
``agents.policies.signals.ask_structured``, shared with the offline evaluation.

The engine (``agents/engine/understand.py``) plans the calls here, runs them in its model threads
while it renews the turn's lease, then records them here. A registered signal provider (the
evaluation harness's oracle mode) takes precedence: then no call is made
(``agents/engine/policies_bridge.py``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import HumanMessage
from pydantic import BaseModel

from agents import llm
from agents.engine.context import messages_for_log
from agents.models import ModelCall, ModelProfile, Turn
from agents.policies.adapter import ParsedRequest
from agents.policies.signals import (
    AmbiguityRating,
    InterpretationOut,
    Interpretations,
    SlotExtraction,
    StructuredAnswer,
    ambiguity_prompt,
    ask_structured,
    build_signals,
    extraction_prompt,
    interpretation_prompt,
    interpretations_prompt,
)

AMBIGUITY = "signals:ambiguity"
SAMPLE = "signals:sample"
EXTRACT = "signals:extract"

SAMPLES = 4  # k sampled interpretations
SAMPLE_TEMPERATURE = 0.8  # at least this hot, so that samples can disagree
TIME_SHARE = 0.5  # the signals may use at most this share of the turn's time budget

# What each built-in policy reads. A policy not listed (a custom one) gets no model signals.
NEEDS: Mapping[str, frozenset[str]] = {
    "never": frozenset(),
    "ask_once": frozenset(),
    "llm_judge": frozenset({"ambiguity"}),
    "intent_sampling": frozenset({"samples"}),
    "value_of_information": frozenset({"extraction", "samples"}),
    "bandit": frozenset({"extraction", "samples", "ambiguity"}),
    # The default reads the detectors only: no model call, so the embedded model cannot make
    # it worse (docs/policies.md, "Model signals").
    "ask_when_blocked": frozenset(),
}


@dataclass(frozen=True)
class SignalCall:
    purpose: str
    schema: type[BaseModel]
    prompt: str
    temperature: float | None = None


def needed(policy_name: str) -> frozenset[str]:
    return NEEDS.get(policy_name, frozenset())


def calls_per_turn(policy_name: str) -> int:
    """The most signal calls the policy costs a turn (the embedded model samples in one call)."""
    needs = needed(policy_name)
    return len(needs - {"samples"}) + (SAMPLES if "samples" in needs else 0)


def plan(policy_name: str, profile: ModelProfile, parsed: ParsedRequest) -> list[SignalCall]:
    """The calls ``policy_name`` needs for this turn's ``parsed`` request (none for never,
    ask_once, custom ones)."""
    needs = needed(policy_name)
    if not needs:
        return []
    request, template, known = parsed.request, parsed.template, dict(parsed.answers)
    if not request.strip():
        return []
    specs = list(template.slots) if template else []
    calls: list[SignalCall] = []
    if "extraction" in needs:
        calls.append(SignalCall(EXTRACT, SlotExtraction, extraction_prompt(request, specs)))
    if "ambiguity" in needs:
        calls.append(
            SignalCall(AMBIGUITY, AmbiguityRating, ambiguity_prompt(request, specs, known))
        )
    if "samples" in needs:
        if llm.can_sample(profile):
            hot = max(profile.temperature, SAMPLE_TEMPERATURE)
            prompt = interpretation_prompt(request, specs, known)
            calls += [SignalCall(SAMPLE, InterpretationOut, prompt, hot)] * SAMPLES
        else:
            prompt = interpretations_prompt(request, specs, known, count=SAMPLES)
            calls.append(SignalCall(SAMPLE, Interpretations, prompt))
    return calls


def run_call(profile: ModelProfile, call: SignalCall, stop: Any = None) -> StructuredAnswer:
    """One call (no database access: the engine runs it in a model thread). Never raises. Once
    ``stop`` (a threading.Event) is set the call ends at its next streamed piece."""
    try:
        model = llm.build_chat_model(profile, schema=call.schema, temperature=call.temperature)
    except Exception as exc:  # e.g. the embedded model or a provider package is missing
        return StructuredAnswer(prompt=call.prompt, error=f"{type(exc).__name__}: {exc}"[:2000])
    return ask_structured(
        model, call.prompt, call.schema, schema_in_prompt=llm.schema_in_prompt(profile), stop=stop
    )


def timed_out(call: SignalCall, seconds: float) -> StructuredAnswer:
    return StructuredAnswer(
        prompt=call.prompt,
        error=f"TimeoutError: no answer within the signals' {seconds:.0f} s share of the turn.",
        latency_ms=int(seconds * 1000),
    )


def model_call(
    turn: Turn, profile: ModelProfile, call: SignalCall, answer: StructuredAnswer
) -> ModelCall:
    """The ModelCall row that logs a signal call (not saved: the engine saves it and counts it
    in the turn's tokens and cost)."""
    row = ModelCall(
        turn=turn,
        agent=turn.agent,
        provider=profile.provider,
        model=profile.model,
        purpose=call.purpose,
        messages=messages_for_log([HumanMessage(content=answer.prompt)]),
        response=answer.text,
        tokens_in=answer.tokens_in,
        tokens_out=answer.tokens_out,
        latency_ms=answer.latency_ms,
        error=answer.error,
    )
    row.cost = profile.cost(row.tokens_in, row.tokens_out)
    return row


def options(answers: Sequence[StructuredAnswer]) -> dict[str, Any]:
    """``decide_from_context`` options from the answers that parsed (none: no options)."""
    rating: AmbiguityRating | None = None
    extraction: SlotExtraction | None = None
    samples: list[InterpretationOut] = []
    for answer in answers:
        value = answer.value
        if isinstance(value, AmbiguityRating):
            rating = value
        elif isinstance(value, SlotExtraction):
            extraction = value
        elif isinstance(value, InterpretationOut):
            samples.append(value)
        elif isinstance(value, Interpretations):
            samples += value.interpretations
    result: dict[str, Any] = {}
    if rating is not None or samples:
        result["signals"] = build_signals(rating=rating, samples=samples)
    if extraction is not None:
        result["extraction"] = extraction
    return result
