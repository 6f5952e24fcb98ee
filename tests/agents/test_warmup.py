"""A starting worker loads the local models its turns use (agents/engine/warmup.py)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from celery.signals import worker_init, worker_process_init
from django.test import override_settings

from agents import llm
from agents.engine import warmup
from agents.models import Agent, ModelProfile, Provider
from agents.policies import parse_money, places
from agents.profiles import set_default
from collab.workspaces.models import Workspace


@pytest.fixture
def loaded(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """What the warm-up loaded (the loaders replaced by recorders)."""
    seen: list[str] = []
    monkeypatch.setattr(warmup, "warm_embedded_model", lambda: seen.append("embedded"))
    monkeypatch.setattr(warmup, "warm_wordllama", lambda: seen.append("wordllama"))
    monkeypatch.setattr(warmup, "warm_detectors", lambda: seen.append("detectors"))
    return seen


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(warmup, "_started", type(warmup._started)())


@pytest.mark.django_db
def test_the_embedded_model_and_wordllama_are_loaded_when_the_site_uses_them(
    loaded: list[str],
) -> None:
    with override_settings(MEMORY_EMBEDDING_PROVIDER="wordllama"):
        took = warmup.warm_up()

    assert loaded == ["embedded", "wordllama", "detectors"]
    assert set(took) == {"embedded model", "wordllama", "detectors"}


@pytest.mark.django_db
def test_nothing_is_loaded_that_no_turn_uses(loaded: list[str], workspace: Workspace) -> None:
    fake = ModelProfile.objects.create(name="hosted", provider=Provider.FAKE, model="echo")
    set_default(fake)

    with override_settings(MEMORY_EMBEDDING_PROVIDER=""):
        assert set(warmup.warm_up()) == {"detectors"}  # every turn reads them
    assert loaded == ["detectors"]

    # ... until an agent uses the embedded model.
    local = ModelProfile.objects.create(name="local", provider=Provider.EMBEDDED, model="x")
    Agent.objects.create(workspace=workspace, name="Tiny", model_profile=local)
    with override_settings(MEMORY_EMBEDDING_PROVIDER=""):
        warmup.warm_up()
    assert loaded == ["detectors", "embedded", "detectors"]


@pytest.mark.django_db
def test_a_part_that_fails_is_logged_and_the_rest_still_loads(
    monkeypatch: pytest.MonkeyPatch, loaded: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    def broken() -> None:
        raise llm.ModelConfigError("The embedded model file is missing.")

    monkeypatch.setattr(warmup, "warm_embedded_model", broken)
    with override_settings(MEMORY_EMBEDDING_PROVIDER="wordllama"):
        took = warmup.warm_up()

    assert list(took) == ["wordllama", "detectors"]
    assert "could not load the embedded model" in caplog.text


@pytest.mark.parametrize("signal", [worker_init, worker_process_init])
def test_a_starting_worker_warms_up_once_in_the_background(
    signal: Any, monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    runs: list[int] = []
    monkeypatch.setattr(warmup, "warm_up", lambda: runs.append(1) or {})

    with override_settings(AGENTS_WARM_UP=True, CELERY_WORKER_POOL="threads"):
        signal.send(sender=None)
        thread = warmup.start()  # a second start (the solo pool sends both signals): nothing

    assert thread is None
    for t in threading.enumerate():
        if t.name == "agents-warm-up":
            t.join(5)
    assert runs == [1]


def test_no_warm_up_when_switched_off(monkeypatch: pytest.MonkeyPatch, fresh: None) -> None:
    runs: list[int] = []
    monkeypatch.setattr(warmup, "warm_up", lambda: runs.append(1) or {})

    with override_settings(AGENTS_WARM_UP=False):
        worker_init.send(sender=None)

    assert runs == []


def test_a_prefork_parent_leaves_the_warm_up_to_its_children(
    monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    runs: list[int] = []
    monkeypatch.setattr(warmup, "start", lambda: runs.append(1))

    with override_settings(AGENTS_WARM_UP=True, CELERY_WORKER_POOL="prefork"):
        worker_init.send(sender=None)
        assert runs == []
        worker_process_init.send(sender=None)
    assert runs == [1]


def test_the_detectors_warm_up_loads_the_gazetteer_and_the_currency_tables() -> None:
    places._gazetteer.cache_clear()
    parse_money._currency_names.cache_clear()

    warmup.warm_detectors()

    assert places._gazetteer.cache_info().currsize == 1
    assert parse_money._currency_names.cache_info().currsize == 1
