"""Embedding models for memory retrieval, from the ``MEMORY_EMBEDDING_*`` settings:
OpenAI-compatible through langchain-openai's ``OpenAIEmbeddings`` (the ``openai`` extra), or
langchain-core's ``DeterministicFakeEmbedding`` (and test-registered fakes). The shipped WordLlama
model is built by ``agents/memory/embeddings.py``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings

from agents.llm.errors import ModelConfigError


@dataclass(frozen=True)
class EmbeddingProfile:
    """The site's embedding model (``MEMORY_EMBEDDING_*`` settings); ``None`` when unset."""

    provider: str  # "openai" or "fake"
    model: str
    base_url: str = ""
    api_key_env: str = ""
    dimensions: int = 0

    @property
    def identity(self) -> str:
        """Stored with each vector: vectors of another model are never compared."""
        return f"{self.provider}:{self.model}:{self.dimensions}"[:100]


FAKE_EMBEDDING_SIZE = 64
_FAKE_EMBEDDINGS: dict[str, Callable[[int], Embeddings]] = {}


def register_fake_embeddings(name: str, factory: Callable[[int], Embeddings]) -> None:
    """Tests add embedding models under a name (``MEMORY_EMBEDDING_MODEL``); the default fake
    is langchain-core's ``DeterministicFakeEmbedding`` (a vector per text, no meaning)."""
    _FAKE_EMBEDDINGS[name] = factory


def embedding_profile() -> EmbeddingProfile | None:
    provider = settings.MEMORY_EMBEDDING_PROVIDER
    if not provider:
        return None
    return EmbeddingProfile(
        provider=provider,
        model=settings.MEMORY_EMBEDDING_MODEL or "deterministic",
        base_url=settings.MEMORY_EMBEDDING_BASE_URL,
        api_key_env=settings.MEMORY_EMBEDDING_API_KEY_ENV,
        dimensions=settings.MEMORY_EMBEDDING_DIMENSIONS,
    )


def build_embeddings(profile: EmbeddingProfile) -> Embeddings:
    """A langchain-core ``Embeddings`` for ``profile``."""
    if profile.provider == "fake":
        size = profile.dimensions or FAKE_EMBEDDING_SIZE
        if profile.model == "deterministic":
            return DeterministicFakeEmbedding(size=size)
        factory = _FAKE_EMBEDDINGS.get(profile.model)
        if factory is None:
            raise ModelConfigError(f"Unknown fake embedding model {profile.model!r}.")
        return factory(size)
    if profile.provider == "openai":
        try:
            from langchain_openai import OpenAIEmbeddings
        except ImportError as exc:
            raise ModelConfigError(
                "OpenAI-compatible embeddings need the 'openai' extra: "
                "pip install 'collab[openai]'."
            ) from exc
        key = os.environ.get(profile.api_key_env) if profile.api_key_env else None
        if not key and not profile.base_url:
            raise ModelConfigError("MEMORY_EMBEDDING_API_KEY_ENV names no set API key variable.")
        return OpenAIEmbeddings(
            model=profile.model,
            base_url=profile.base_url or None,
            api_key=key or "not-needed",  # type: ignore[arg-type]
            dimensions=profile.dimensions or None,
            # Local servers do not speak OpenAI's tokens, and tiktoken would download its tables.
            check_embedding_ctx_length=False,
            max_retries=0,  # the embedding job owns retries
            timeout=30,
        )
    raise ModelConfigError(f"Unknown embedding provider {profile.provider!r}.")
