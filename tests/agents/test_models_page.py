"""The Models page (site administrators), the site's default model, and the environment
bootstrap of model profiles."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from django.utils.html import escape

from agents import profiles
from agents.llm import embedded
from agents.models import ModelProfile, Provider
from tests.agents.openai_server import closed_port, llama_server  # noqa: F401


@pytest.fixture
def staff(db: None) -> User:
    return User.objects.create_user(username="root", password="x", is_staff=True)


def _local(base_url: str, **fields: Any) -> ModelProfile:
    return ModelProfile.objects.create(
        name="Local server",
        provider=Provider.OPENAI,
        model="smollm2",
        base_url=base_url,
        max_tokens=fields.pop("max_tokens", 48),
        temperature=0.0,
        **fields,
    )


def test_only_site_administrators_see_the_models_page(
    as_user: Any, alice: User, staff: User
) -> None:
    assert as_user(alice).get(reverse("agents:models")).status_code == 403
    page = as_user(staff).get(reverse("agents:models"))
    assert page.status_code == 200
    assert b"Built-in small model" in page.content
    # what the built-in model can do, in the measured figures' whole sentences
    assert f"Runs on this server. {escape(embedded.capabilities())}</td>".encode() in page.content


def test_an_administrator_adds_an_openai_compatible_endpoint_by_key_variable(
    as_user: Any, staff: User
) -> None:
    response = as_user(staff).post(
        reverse("agents:models"),
        {
            "name": "Team GPT",
            "provider": "openai",
            "model": "gpt-4.1-mini",
            "base_url": "",
            "api_key_env": "TEAM_OPENAI_KEY",
            "temperature": "0.2",
            "max_tokens": "512",
            "timeout_seconds": "60",
            "price_in_per_1k": "0",
            "price_out_per_1k": "0",
        },
        follow=True,
    )
    profile = ModelProfile.objects.get()
    assert (profile.provider, profile.api_key_env) == ("openai", "TEAM_OPENAI_KEY")
    assert b"Team GPT was added" in response.content
    assert b'TEAM_OPENAI_KEY <span class="error">(not set on this server)' in response.content


def test_a_key_pasted_instead_of_its_variable_name_is_refused(as_user: Any, staff: User) -> None:
    response = as_user(staff).post(
        reverse("agents:models"),
        {
            "name": "Oops",
            "provider": "openai",
            "model": "gpt-4.1-mini",
            "api_key_env": "sk-live-1234",
            "temperature": "0.2",
            "max_tokens": "512",
            "timeout_seconds": "60",
            "price_in_per_1k": "0",
            "price_out_per_1k": "0",
        },
    )
    assert response.status_code == 400
    assert not ModelProfile.objects.exists()


def test_making_a_model_the_default_gives_it_to_agents_without_one(
    as_user: Any, staff: User
) -> None:
    first = _local("http://127.0.0.1:9/v1")
    second = ModelProfile.objects.create(name="Other", provider=Provider.FAKE, model="echo")

    as_user(staff).post(reverse("agents:default_model", args=[first.pk]))
    assert profiles.resolve_profile(None) == first
    as_user(staff).post(reverse("agents:default_model", args=[second.pk]))
    assert profiles.resolve_profile(None) == second
    assert list(ModelProfile.objects.filter(is_default=True)) == [second]
    as_user(staff).post(reverse("agents:default_model", args=[0]))
    assert profiles.resolve_profile(None).is_embedded


@pytest.mark.timeout(900)
def test_the_test_button_calls_the_local_server_and_shows_the_latency(
    as_user: Any,
    staff: User,
    llama_server: str,  # noqa: F811
) -> None:
    profile = _local(llama_server, max_tokens=160, timeout_seconds=600)

    response = as_user(staff).post(
        reverse("agents:test_model", args=[profile.pk]), HTTP_HX_REQUEST="true"
    )

    body = response.content.decode()
    assert response.status_code == 200
    assert 'class="model-test ok"' in body, body
    assert "Answered in " in body
    assert " ms" in body


def test_the_test_button_shows_the_exact_error_of_a_closed_port(
    as_user: Any,
    staff: User,
    closed_port: str,  # noqa: F811
) -> None:
    profile = _local(closed_port)

    response = as_user(staff).post(
        reverse("agents:test_model", args=[profile.pk]), HTTP_HX_REQUEST="true"
    )

    body = response.content.decode()
    assert 'class="model-test failed"' in body
    assert f"Could not connect to the model at {closed_port}" in body


def test_the_environment_creates_the_default_profile(settings: Any, db: None) -> None:
    settings.OPENAI_API_KEY_SET = True
    settings.OPENAI_BASE_URL = "http://127.0.0.1:11434/v1"
    settings.OPENAI_MODEL = "qwen2.5:7b"
    settings.OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1"

    created = profiles.bootstrap_from_environment()

    assert [p.name for p in created] == [
        "OpenAI (from the environment)",
        "Ollama (from the environment)",
    ]
    default = profiles.resolve_profile(None)
    assert (default.name, default.model, default.api_key_env) == (
        "OpenAI (from the environment)",
        "qwen2.5:7b",
        "OPENAI_API_KEY",
    )


def test_the_environment_refreshes_its_profile_and_keeps_a_chosen_default(
    settings: Any, db: None
) -> None:
    chosen = ModelProfile.objects.create(name="Chosen", provider=Provider.FAKE, is_default=True)
    settings.ANTHROPIC_API_KEY_SET = True
    settings.ANTHROPIC_MODEL = "claude-one"
    profiles.bootstrap_from_environment()
    settings.ANTHROPIC_MODEL = "claude-two"

    profiles.bootstrap_from_environment()

    anthropic = ModelProfile.objects.get(name="Anthropic (from the environment)")
    assert anthropic.model == "claude-two"
    assert ModelProfile.objects.filter(name__startswith="Anthropic").count() == 1
    assert profiles.resolve_profile(None) == chosen


def test_migrate_runs_the_environment_bootstrap(settings: Any, db: None) -> None:
    from django.core.management import call_command

    settings.OLLAMA_BASE_URL = "http://127.0.0.1:11434/v1"
    settings.OLLAMA_MODEL = "llama3.2"

    call_command("migrate", verbosity=0)

    assert profiles.resolve_profile(None).name == "Ollama (from the environment)"


def test_owners_pick_models_in_plain_words(as_user: Any, alice: User, workspace: Any) -> None:
    ModelProfile.objects.create(
        name="Team GPT", provider=Provider.OPENAI, model="gpt-4.1-mini", api_key_env="K"
    )
    ModelProfile.objects.create(name="Fake suggester", provider=Provider.FAKE, model="suggest")

    page = as_user(alice).get(reverse("agents:manage", args=[workspace.pk])).content.decode()

    assert "Team GPT (OpenAI-compatible, gpt-4.1-mini)" in page
    assert "The site&#x27;s default model: SmolLM2-135M-Instruct (small embedded model)" in page
    assert "Fake suggester (test model)" in page
    assert "tests and benchmarks" not in page


def test_the_test_buttons_first_words_are_words_not_the_answers_json_opening(db: None) -> None:
    # The fake streams its JSON answer in pieces, 100 ms apart: '{"actions":', ' [{"kind":',
    # ...; the first words of the reply come several pieces after the first piece.
    profile = ModelProfile.objects.create(name="Slow", provider=Provider.FAKE, model="echo@100")

    result = profiles.test_profile(profile)

    assert result.ok, result.error
    assert result.first_token_ms is not None
    assert result.first_token_ms >= 300
    assert result.first_token_ms <= result.latency_ms
