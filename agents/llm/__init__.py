"""The only package that builds langchain-core chat models (and embedding models).

Providers (``ModelProfile.provider``), a module each:

* ``openai``: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server) through
  langchain-openai (the ``openai`` extra), with a JSON-schema ``response_format``; and
  ``anthropic``: through langchain-anthropic (the ``anthropic`` extra), the prompt asking for JSON
  that the engine validates (``providers.py``).
* ``embedded``: a small local model run in-process by llama-cpp-python, its output constrained
  by a grammar (``embedded.py``; what it may write, ``embedded_reply.py``).
* ``fake``: langchain-core's fake chat models, driven by a named behaviour, for tests and
  benchmarks (``fakes.py``).

``chat_models.py`` builds a model for a profile, streams it and reads its decision;
``embeddings.py`` builds the memory retrieval's embedding models; ``errors.py`` holds the two
errors every caller catches. Which profile an agent uses is ``agents/profiles.py``'s business.

The names below are what the rest of the code calls (``from agents import llm``); anything
else is imported from its module.
"""

from __future__ import annotations

from agents.llm.chat_models import (
    StreamPiece,
    build_chat_model,
    can_sample,
    decision_schema,
    parse_decision,
    schema_in_prompt,
    stream_model,
)
from agents.llm.embedded import embedded_messages, embedded_profile
from agents.llm.errors import ModelConfigError, ModelError

__all__ = [
    "ModelConfigError",
    "ModelError",
    "StreamPiece",
    "build_chat_model",
    "can_sample",
    "decision_schema",
    "embedded_messages",
    "embedded_profile",
    "parse_decision",
    "schema_in_prompt",
    "stream_model",
]
