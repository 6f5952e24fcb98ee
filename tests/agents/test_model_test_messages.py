"""The Models page's Test says precisely what is wrong with a model (nothing answers at the
address, the key is refused or missing, the model is unknown) and never asks for a package:
against llama-cpp-python's real OpenAI-compatible server (tests/agents/openai_server.py)."""

from __future__ import annotations

import sys
from typing import Any

import httpx
import pytest

from agents import llm, profiles
from agents.llm import diagnosis
from agents.models import ModelProfile, Provider
from tests.agents.openai_server import (  # noqa: F401
    SERVER_KEY,
    closed_port,
    llama_server,
    llama_server_with_key,
    silent_server,
)


def _profile(base_url: str, **fields: Any) -> ModelProfile:
    return ModelProfile.objects.create(
        name="Local server",
        provider=fields.pop("provider", Provider.OPENAI),
        model=fields.pop("model", "smollm2"),
        base_url=base_url,
        max_tokens=fields.pop("max_tokens", 24),
        temperature=0.0,
        timeout_seconds=fields.pop("timeout_seconds", 300),
        **fields,
    )


def test_a_closed_port_is_reported_as_nothing_answering_at_the_address(
    db: None,
    closed_port: str,  # noqa: F811
) -> None:
    result = profiles.test_profile(_profile(closed_port))

    assert not result.ok
    assert f"Could not connect to the model at {closed_port}: nothing answers" in result.error
    assert "Is the server running, and is the address right?" in result.error


def test_a_server_that_never_answers_is_reported_as_not_answering_in_time(
    db: None,
    silent_server: str,  # noqa: F811
) -> None:
    result = profiles.test_profile(_profile(silent_server, timeout_seconds=1))

    assert not result.ok
    assert f"The model at {silent_server} accepted the connection but did not answer" in (
        result.error
    )
    assert "within 1 s" in result.error


@pytest.mark.timeout(600)
def test_a_server_that_wants_a_key_says_the_profile_names_none(
    db: None,
    llama_server_with_key: str,  # noqa: F811
) -> None:
    result = profiles.test_profile(_profile(llama_server_with_key))

    assert not result.ok
    assert f"The server at {llama_server_with_key} asks for an API key (401" in result.error


@pytest.mark.timeout(600)
def test_a_refused_key_is_named_by_its_variable(
    db: None,
    monkeypatch: pytest.MonkeyPatch,
    llama_server_with_key: str,  # noqa: F811
) -> None:
    monkeypatch.setenv("LOCAL_SERVER_KEY", "not-the-key")

    result = profiles.test_profile(_profile(llama_server_with_key, api_key_env="LOCAL_SERVER_KEY"))

    assert not result.ok
    assert f"The server at {llama_server_with_key} refused the key in LOCAL_SERVER_KEY (401" in (
        result.error
    )


@pytest.mark.timeout(900)
def test_the_right_key_passes_and_an_unlisted_model_name_is_noted(
    db: None,
    monkeypatch: pytest.MonkeyPatch,
    llama_server_with_key: str,  # noqa: F811
) -> None:
    monkeypatch.setenv("LOCAL_SERVER_KEY", SERVER_KEY)

    result = profiles.test_profile(
        _profile(llama_server_with_key, api_key_env="LOCAL_SERVER_KEY", max_tokens=160)
    )

    assert result.ok, result.error
    # llama.cpp's server answers any model name with the file it serves, and lists that file
    assert "The server does not list the model 'smollm2'" in result.note
    assert "SmolLM2" in result.note


def test_no_test_result_asks_for_a_package(
    db: None,
    monkeypatch: pytest.MonkeyPatch,
    closed_port: str,  # noqa: F811
) -> None:
    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # as if it were not installed

    result = profiles.test_profile(_profile(closed_port))

    assert not result.ok
    assert "pip" not in result.error
    assert "extra" not in result.error
    assert "make run" in result.error


def _anthropic_error(kind: str, status: int, message: str) -> Exception:
    anthropic = pytest.importorskip("anthropic")
    request = httpx.Request("POST", "https://api.example.test/v1/messages")
    response = httpx.Response(status, request=request)
    body = {"type": "error", "error": {"type": kind, "message": message}}
    error_class = {401: anthropic.AuthenticationError, 404: anthropic.NotFoundError}[status]
    return error_class(message, response=response, body=body)  # type: ignore[no-any-return]


def test_an_unknown_anthropic_model_is_named() -> None:
    target = diagnosis.Target(
        provider="anthropic", where="Anthropic's API", model="claude-nope", key_env="ANT_KEY"
    )

    said = diagnosis.explain(_anthropic_error("not_found_error", 404, "model: claude-nope"), target)

    assert said.startswith("The server at Anthropic's API does not know the model 'claude-nope'")


def test_a_refused_anthropic_key_is_named_by_its_variable() -> None:
    target = diagnosis.Target(
        provider="anthropic", where="Anthropic's API", model="claude-x", key_env="ANT_KEY"
    )

    said = diagnosis.explain(
        _anthropic_error("authentication_error", 401, "invalid x-api-key"), target
    )

    assert said.startswith("The server at Anthropic's API refused the key in ANT_KEY (401")


def test_an_anthropic_profile_is_built_with_its_key_and_gateway(
    db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("langchain_anthropic")
    monkeypatch.setenv("ANT_KEY", "sk-ant-test")
    profile = _profile(
        "https://gateway.example.test", provider=Provider.ANTHROPIC, model="claude-x"
    )
    profile.api_key_env = "ANT_KEY"

    model: Any = llm.build_chat_model(profile)

    assert (model.model, model.max_tokens) == ("claude-x", 24)
    assert model.anthropic_api_url == "https://gateway.example.test"
    assert model.anthropic_api_key.get_secret_value() == "sk-ant-test"
