"""The hosted and server providers: OpenAI-compatible endpoints (langchain-openai, the ``openai``
extra) with a JSON-schema response format, and Anthropic (langchain-anthropic, the ``anthropic``
extra), whose prompt asks for JSON that the engine validates. ``make run`` installs both; each is
imported where a model of its kind is built.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from pydantic import SecretStr

from agents.llm.endpoints import EndpointRefused
from agents.llm.errors import ModelConfigError, ModelError
from agents.llm.guarded_http import guarded_async_client, guarded_client
from agents.models import ModelProfile
from collab.lib.env import env_str


def _api_key(profile: ModelProfile, *, required: bool) -> str | None:
    if not profile.api_key_env:
        if required:
            raise ModelConfigError(f"Profile {profile.name!r} names no API key variable.")
        return None
    key = env_str(profile.api_key_env)  # or the file named by <NAME>_FILE
    if not key and required:
        raise ModelConfigError(
            f"The environment variable {profile.api_key_env} (API key of profile "
            f"{profile.name!r}) is not set."
        )
    return key


def openai_model(
    profile: ModelProfile, schema: dict[str, Any], *, name: str, temperature: float
) -> BaseChatModel:
    try:
        from langchain_openai import ChatOpenAI
    except ImportError as exc:
        raise ModelConfigError(
            "This server was installed without the OpenAI-compatible provider: `make run` "
            "installs it with the others."
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
        # Each connection goes only to an address the endpoint rules allow, checked as it
        # connects (agents/llm/guarded_http.py).
        http_client=guarded_client(timeout=profile.timeout_seconds),
        http_async_client=guarded_async_client(timeout=profile.timeout_seconds),
    )
    return OpenAICompatibleChatModel(
        base_key=profile.base_url or "openai",
        strict=model.bind(  # OpenAI, vLLM, Ollama, llama.cpp's own llama-server
            response_format={"type": "json_schema", "json_schema": {"name": name, "schema": schema}}
        ),
        # llama-cpp-python's server: JSON mode with a schema, sent as a plain body field (a
        # ``response_format`` argument would take the client's strict-parsing stream helper).
        loose=model.bind(
            extra_body={
                "response_format": {"type": "json_object", "schema": grammar_friendly(schema)}
            }
        ),
    )


GRAMMAR_MAX_LENGTH = 200


def grammar_friendly(schema: Any) -> Any:
    """``schema`` without the string bounds above ``GRAMMAR_MAX_LENGTH``: llama.cpp's grammar
    converter spells ``maxLength: 1500`` out as 1,500 nested rules, which llama.cpp then
    refuses ("exceeds sane defaults") and the server drops the connection. The bound is
    still checked when the answer is validated."""
    if isinstance(schema, dict):
        return {
            key: grammar_friendly(value)
            for key, value in schema.items()
            if not (key == "maxLength" and isinstance(value, int) and value > GRAMMAR_MAX_LENGTH)
        }
    if isinstance(schema, list):
        return [grammar_friendly(item) for item in schema]
    return schema


# Endpoints that refused a ``json_schema`` response format and took ``json_object`` + schema
# (llama-cpp-python's server), remembered for this process.
_JSON_OBJECT_ENDPOINTS: set[str] = set()


def _refuses_json_schema(exc: Exception) -> bool:
    status = getattr(exc, "status_code", None)
    text = str(exc)
    return status in (400, 422, 500) and "response_format" in text and "json_schema" in text


def openai_error(exc: Exception, where: str) -> Exception:
    """A provider failure in plain words: ``ModelConfigError`` when trying again cannot help
    (nothing listens there, the key or the model name is wrong), ``ModelError`` otherwise (a
    timeout, a server error: the job retries within the turn's time budget)."""
    try:
        import openai
    except ImportError:  # pragma: no cover - the openai extra is what built this model
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return ModelError(f"The model at {where} did not answer in time ({exc}).")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        if isinstance(cause, EndpointRefused):
            return cause
        return ModelConfigError(
            f"Could not connect to the model at {where}: {cause}. Is the server running? "
            "Check the model on the Models page."
        )
    if isinstance(exc, openai.APIStatusError):
        detail = f"{exc.status_code} from {where}: {exc.message}"[:1500]
        if exc.status_code >= 500 or exc.status_code == 429:
            return ModelError(f"The model's server failed ({detail}).")
        return ModelConfigError(f"The model's server refused the request ({detail}).")
    if isinstance(exc, openai.APIError):  # an error event inside the stream: the server's word
        return ModelConfigError(f"The model's server refused the request ({where}: {exc.message}).")
    return exc


class OpenAICompatibleChatModel(BaseChatModel):
    """An OpenAI-compatible endpoint asked for JSON that matches the schema: with a
    ``json_schema`` response format, or, where the server refuses that format before answering
    (llama-cpp-python's server), with ``json_object`` and the schema, at once and from then on."""

    base_key: str
    strict: Any
    loose: Any

    @property
    def _llm_type(self) -> str:
        return "collab-openai-compatible"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        chunks = list(self._stream(messages, stop, run_manager))
        text = "".join(str(chunk.message.content) for chunk in chunks)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        try:
            yield from self._stream_json(messages)
        except Exception as exc:
            raise openai_error(exc, self.base_key) from exc

    def _stream_json(self, messages: list[BaseMessage]) -> Iterator[ChatGenerationChunk]:
        try:
            yield from self._stream_either(messages)
        except ValueError as exc:
            if "No generation chunks" not in str(exc):
                raise
            # llama-cpp-python's server answers 200 with an empty stream when it cannot serve
            # the request (e.g. the prompt is longer than its context window): the same
            # request would fail the same way.
            raise ModelConfigError(
                f"The model's server at {self.base_key} sent an empty answer (HTTP 200, no "
                "text): the prompt may be longer than its context window."
            ) from exc

    def _stream_either(self, messages: list[BaseMessage]) -> Iterator[ChatGenerationChunk]:
        loose = self.base_key in _JSON_OBJECT_ENDPOINTS
        started = False
        try:
            for chunk in (self.loose if loose else self.strict).stream(messages):
                started = True
                yield ChatGenerationChunk(message=chunk)
        except Exception as exc:
            if loose or started or not _refuses_json_schema(exc):
                raise
            _JSON_OBJECT_ENDPOINTS.add(self.base_key)
            for chunk in self.loose.stream(messages):
                yield ChatGenerationChunk(message=chunk)


def anthropic_model(profile: ModelProfile, *, temperature: float) -> BaseChatModel:
    try:
        from langchain_anthropic import ChatAnthropic
    except ImportError as exc:
        raise ModelConfigError(
            "This server was installed without the Anthropic provider: `make run` installs it "
            "with the others."
        ) from exc
    key = _api_key(profile, required=True) or ""
    return ChatAnthropic(  # the fields' aliases: what the type checker reads
        model_name=profile.model,
        api_key=SecretStr(key),
        base_url=profile.base_url or None,  # a proxy or gateway that speaks Anthropic's API
        temperature=temperature,
        max_tokens_to_sample=profile.max_tokens,
        timeout=profile.timeout_seconds,
        max_retries=0,
        stop=None,
    )
