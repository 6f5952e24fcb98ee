"""Model profiles: which one an agent uses, the site's default, the profiles the environment
sets up, and a test call.

* ``resolve_profile``: the agent's own profile, else the site's default, else the embedded model.
* ``site_default``: the profile marked default on the Models page, else the one named by
  ``AGENTS_DEFAULT_PROFILE``, else None (agents then use the embedded model).
* ``bootstrap_from_environment``: ``OPENAI_API_KEY`` (+ ``OPENAI_BASE_URL``, ``OPENAI_MODEL``),
  ``ANTHROPIC_API_KEY`` (+ ``ANTHROPIC_MODEL``) and ``OLLAMA_BASE_URL`` (+ ``OLLAMA_MODEL``)
  create or refresh a profile each, at start-up (after ``migrate``, which ``make run`` and the
  release step run); the first of them becomes the default when none is set. The key itself
  never reaches the database: a profile names the variable that holds it.
* ``test_profile``: one real call to the model, as the Models page's Test button makes it:
  the answer, the latency and the tokens, or what is wrong in plain words (nothing answers at
  the address, the key was refused or is not set, the model is unknown: ``llm/diagnosis.py``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.utils.json import parse_partial_json

from agents import llm
from agents.llm import diagnosis
from agents.models import ModelProfile, Provider
from agents.schemas import json_schema, streamed_text
from collab.lib.env import env_str


def resolve_profile(profile: ModelProfile | None) -> ModelProfile:
    """The agent's profile, else the site default (marked on the Models page, or named by
    ``AGENTS_DEFAULT_PROFILE``), else the embedded model."""
    if profile is not None:
        return profile
    return site_default() or llm.embedded_profile()


def site_default() -> ModelProfile | None:
    marked = ModelProfile.objects.filter(is_default=True).first()
    if marked is not None:
        return marked
    name = settings.AGENTS_DEFAULT_PROFILE
    return ModelProfile.objects.filter(name=name).first() if name else None


@transaction.atomic
def set_default(profile: ModelProfile | None) -> None:
    """Make ``profile`` the site's default model (None: the embedded model again)."""
    others = ModelProfile.objects.filter(is_default=True)
    if profile is not None:
        others = others.exclude(pk=profile.pk)
    others.update(is_default=False)
    if profile is not None and not profile.is_default:
        profile.is_default = True
        profile.save(update_fields=["is_default"])


def user_choices() -> QuerySet[ModelProfile]:
    """The profiles owners choose from for an agent (``describe`` names each in plain words)."""
    return ModelProfile.objects.order_by("name")


PROVIDER_WORDS = {
    Provider.EMBEDDED: "built-in small model",
    Provider.OPENAI: "OpenAI-compatible",
    Provider.ANTHROPIC: "Anthropic",
    Provider.FAKE: "test model",
}


def describe(profile: ModelProfile) -> str:
    """A profile in plain words: "Team GPT (OpenAI-compatible, gpt-4.1-mini)"."""
    words = PROVIDER_WORDS.get(Provider(profile.provider), profile.provider)
    model = f", {profile.model}" if profile.model and profile.provider != Provider.FAKE else ""
    return f"{profile.name} ({words}{model})"


# --- The environment --------------------------------------------------------------------------


@dataclass(frozen=True)
class EnvironmentModel:
    name: str
    provider: str
    model: str
    base_url: str = ""
    api_key_env: str = ""


def environment_models() -> list[EnvironmentModel]:
    """The profiles the environment asks for, in order of preference for the default."""
    found = []
    if settings.OPENAI_API_KEY_SET:
        found.append(
            EnvironmentModel(
                name="OpenAI (from the environment)",
                provider=Provider.OPENAI,
                model=settings.OPENAI_MODEL,
                base_url=settings.OPENAI_BASE_URL,
                api_key_env="OPENAI_API_KEY",
            )
        )
    if settings.ANTHROPIC_API_KEY_SET:
        found.append(
            EnvironmentModel(
                name="Anthropic (from the environment)",
                provider=Provider.ANTHROPIC,
                model=settings.ANTHROPIC_MODEL,
                api_key_env="ANTHROPIC_API_KEY",
            )
        )
    if settings.OLLAMA_BASE_URL:
        found.append(
            EnvironmentModel(
                name="Ollama (from the environment)",
                provider=Provider.OPENAI,
                model=settings.OLLAMA_MODEL,
                base_url=settings.OLLAMA_BASE_URL,
            )
        )
    return found


@transaction.atomic
def bootstrap_from_environment() -> list[ModelProfile]:
    """Create or refresh the environment's profiles; the first becomes the site's default when
    none is set. Returns them."""
    profiles = []
    for wanted in environment_models():
        profile, _ = ModelProfile.objects.update_or_create(
            name=wanted.name,
            defaults={
                "provider": wanted.provider,
                "model": wanted.model,
                "base_url": wanted.base_url,
                "api_key_env": wanted.api_key_env,
            },
        )
        profiles.append(profile)
    if profiles and site_default() is None:
        set_default(profiles[0])
    return profiles


def bootstrap_after_migrate(**kwargs: Any) -> None:
    """``post_migrate`` receiver (``AgentsConfig.ready``)."""
    if kwargs.get("app_config") is not None and kwargs["app_config"].label != "agents":
        return
    bootstrap_from_environment()


# --- The Test button --------------------------------------------------------------------------


@dataclass(frozen=True)
class TestResult:
    ok: bool
    answer: str = ""
    kind: str = ""
    latency_ms: int = 0
    first_token_ms: int | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    error: str = ""
    note: str = ""  # after a call that worked: something still worth fixing

    __test__ = False  # not a pytest class


TEST_REQUEST = "Say hello to the team in one short sentence."


def _test_messages(profile: ModelProfile) -> list[Any]:
    if profile.is_embedded:
        context = {
            "agent": "Assistant",
            "task": {"title": "Model check", "goal": ""},
            "messages": [{"author": "admin", "kind": "human", "body": TEST_REQUEST}],
            "requested_by": "admin",
            "request": TEST_REQUEST,
        }
        return llm.embedded_messages(context)
    schema = json_schema(llm.decision_schema(profile))
    return [
        SystemMessage(
            content="You are Assistant, an AI agent in Collab. Answer with ONE JSON object that "
            f"matches this JSON schema, and nothing else:\n{schema}"
        ),
        HumanMessage(content=f"- admin: {TEST_REQUEST}"),
    ]


def _words_shown(text: str) -> bool:
    try:
        return bool(streamed_text(parse_partial_json(text)).strip())
    except ValueError:
        return False


HOSTED = {Provider.OPENAI: "OpenAI's API", Provider.ANTHROPIC: "Anthropic's API"}


def _target(profile: ModelProfile) -> diagnosis.Target:
    key = None
    if profile.api_key_env:
        key = env_str(profile.api_key_env) or None
    return diagnosis.Target(
        provider=str(profile.provider),
        where=profile.base_url or HOSTED.get(Provider(profile.provider), str(profile.provider)),
        model=profile.model,
        key_env=profile.api_key_env,
        key=key,
        timeout_seconds=profile.timeout_seconds,
    )


def test_profile(profile: ModelProfile) -> TestResult:
    """One real call, streamed like a turn: the reply, latency, tokens, or what is wrong."""
    started = time.monotonic()
    first: float | None = None
    text = ""
    tokens_in = tokens_out = None
    try:
        model = llm.build_chat_model(profile)
        for piece in llm.stream_model(model, _test_messages(profile)):
            text += piece.text
            if first is None and _words_shown(text):
                first = time.monotonic()  # as a turn's first token: words, not JSON's opening
            tokens_in = piece.tokens_in or tokens_in
            tokens_out = piece.tokens_out or tokens_out
        decision = llm.parse_decision(profile, text)
    except (llm.ModelError, llm.ModelConfigError, ValidationError) as exc:
        return TestResult(
            ok=False,
            latency_ms=int((time.monotonic() - started) * 1000),
            error=diagnosis.explain(exc, _target(profile))[:2000],
            answer=text[:500],
        )
    latency_ms = int((time.monotonic() - started) * 1000)
    action = decision.actions[0]
    return TestResult(
        ok=True,
        answer=action.text,
        kind=action.kind,
        latency_ms=latency_ms,
        note=diagnosis.unlisted_model_note(_target(profile))
        if profile.provider == Provider.OPENAI
        else "",
        first_token_ms=int((first - started) * 1000) if first is not None else None,
        tokens_in=tokens_in,
        tokens_out=tokens_out,
    )
