"""Building a chat model for a profile, calling it, and reading its decision.

Every model streams; the engine (``agents/engine/stream.py``) reads the JSON as it arrives,
streams the human-readable part, and validates the whole against the pydantic schema at the end
(``parse_decision``).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from pydantic import BaseModel

from agents.llm.embedded import EmbeddedChatModel, embedded_final, embedded_model_path
from agents.llm.errors import ModelConfigError, ModelError
from agents.llm.fakes import BehaviourFakeChatModel
from agents.llm.providers import anthropic_model, openai_model
from agents.models import ModelProfile, Provider
from agents.schemas import DecisionOut, SmallDecisionOut, json_schema


def decision_schema(profile: ModelProfile) -> type[BaseModel]:
    """Small local models get the narrow one-action schema; others the full one."""
    return SmallDecisionOut if profile.is_embedded else DecisionOut


def parse_decision(profile: ModelProfile, text: str) -> DecisionOut:
    """Validate a model's whole output; ``ModelError`` if it is not a valid decision."""
    schema = decision_schema(profile)
    if profile.is_embedded:
        text = embedded_final(text)
    try:
        parsed = schema.model_validate_json(text.strip() or "{}")
    except ValueError as exc:
        raise ModelError(f"The model's answer was not a valid decision: {exc}") from exc
    if isinstance(parsed, SmallDecisionOut):
        return parsed.to_decision()
    assert isinstance(parsed, DecisionOut)
    return parsed


def build_chat_model(
    profile: ModelProfile,
    *,
    schema: type[BaseModel] | None = None,
    temperature: float | None = None,
) -> BaseChatModel:
    """A langchain-core chat model for ``profile`` that streams JSON matching ``schema`` (by
    default the profile's decision schema; the model signals pass theirs), at ``temperature``
    (default: the profile's)."""
    json_out = json_schema(schema or decision_schema(profile))
    heat = profile.temperature if temperature is None else temperature
    if profile.provider == Provider.FAKE:
        return BehaviourFakeChatModel(behaviour=profile.model or "echo")
    if profile.provider == Provider.EMBEDDED:
        return EmbeddedChatModel(
            model_path=str(embedded_model_path()),
            # The decision is plain text the model wraps itself; the signals' JSON is grammar-bound.
            decision_json_schema={} if schema is None else json_out,
            max_tokens=profile.max_tokens,
            temperature=heat,
        )
    if profile.provider == Provider.OPENAI:
        name = schema.__name__.lower() if schema is not None else "decision"
        return openai_model(profile, json_out, name=name, temperature=heat)
    if profile.provider == Provider.ANTHROPIC:
        return anthropic_model(profile, temperature=heat)
    raise ModelConfigError(f"Unknown provider {profile.provider!r}.")


def schema_in_prompt(profile: ModelProfile) -> bool:
    """Whether the prompt must carry the JSON schema: every model except the grammar-constrained
    embedded one (its output cannot leave the schema, and its context is small)."""
    return not profile.is_embedded


def can_sample(profile: ModelProfile) -> bool:
    """Whether sampling k separate answers is worth it. The embedded model runs one inference at
    a time on the host's CPU, so it is asked once for several readings instead."""
    return not profile.is_embedded


@dataclass
class StreamPiece:
    """One streamed piece of model output, with usage when the provider reports it."""

    text: str
    tokens_in: int | None = None
    tokens_out: int | None = None


def stream_model(model: BaseChatModel, messages: list[BaseMessage]) -> Iterator[StreamPiece]:
    """Stream text pieces; provider failures become ``ModelError``."""
    try:
        for chunk in model.stream(messages):
            usage = getattr(chunk, "usage_metadata", None) or {}
            yield StreamPiece(
                text=chunk.text,  # langchain-core: the text parts of the content
                tokens_in=usage.get("input_tokens"),
                tokens_out=usage.get("output_tokens"),
            )
    except (ModelError, ModelConfigError):
        raise
    except Exception as exc:
        raise ModelError(f"{type(exc).__name__}: {exc}") from exc
