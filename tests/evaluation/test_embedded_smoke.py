"""A smoke run of the harness with real signals from the embedded local model (SmolLM2 via
llama-cpp-python). Small models are weak: this checks that the calls are made, grammar-checked
and counted, not what they say."""

from __future__ import annotations

import copy

import pytest
from django.conf import settings

from agents.engine.signals import needed
from agents.evaluation.chat_models import chat_model_for_profile
from agents.evaluation.metrics import summarise
from agents.evaluation.runner import RunConfig, run_offline
from agents.evaluation.scenario import load_scenarios, parse_scenarios

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.timeout(900),
    # CI runs the suite in both modes; the model is the same, so once (embedded mode) is enough.
    pytest.mark.skipif(bool(settings.REDIS_URL), reason="runs in embedded mode only"),
]


def test_real_signals_from_the_embedded_model_drive_a_policy(db: None) -> None:
    raw = copy.deepcopy(dict(load_scenarios("default").raw))
    raw["episodes"] = [e for e in raw["episodes"] if e["id"] == "ana-s1-travel_plan"]
    raw["users"] = [u for u in raw["users"] if u["id"] == "ana"]
    scenarios = parse_scenarios(raw)
    model, price = chat_model_for_profile("embedded")
    model = model.model_copy(update={"max_tokens": 96})  # a smoke test: short answers
    config = RunConfig(policies=["llm_judge"], mode="real", memory=(False,), model="embedded")
    run = run_offline(scenarios, config, chat_model=model)
    metrics = summarise(run.results)
    (result,) = run.results
    assert price == 0.0
    assert result.model_calls == len(needed("llm_judge")) * result.agent_turns  # its one call
    assert metrics["tokens"] > 0
    assert result.agent_turns >= 1
    decisions = [e["decision"] for e in run.events if e["actor"] == "agent"]
    assert all(d["decision"] in ("ask", "suggest", "act") for d in decisions)
