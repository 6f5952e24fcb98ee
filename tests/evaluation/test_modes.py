"""The modes say what they measure: detectors get nothing from the labels, the oracle reads only
the text, a dead model stops the run, and the oracle provider costs real turns nothing."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from agents.evaluation.offline import ModelSignals, ModelUnavailable, OfflineAgent, OracleSignals
from agents.evaluation.runner import RunConfig, run_offline
from agents.evaluation.scenario import load_scenarios, parse_scenarios
from agents.evaluation.signals import oracle_active, oracle_options, oracle_run
from agents.evaluation.turn_context import registered_templates
from agents.models import ModelProfile, Provider
from agents.policies import DEFAULT_POLICY
from tests.evaluation.v2data import tiny

LABEL_KEYS = ("blockers", "category", "conflicts", "readings", "success", "check", "hidden")


def test_no_label_of_any_shipped_episode_reaches_the_turn_context() -> None:
    scenarios = load_scenarios("collab-v2")
    with registered_templates(scenarios.templates):
        agent = OfflineAgent(policy="never", today=scenarios.today, users=scenarios.users)
        for episode in scenarios.episodes:
            agent.start(episode)
            context = agent._context([])
            text = json.dumps(context, ensure_ascii=False, default=str)
            visible = json.dumps(
                [episode.request, episode.task.document, episode.task.title, episode.chat],
                ensure_ascii=False,
            ).casefold()
            assert not set(context) & set(LABEL_KEYS)
            for slot, value in episode.slots.items():
                hidden = episode.source(slot) == "hidden" and len(value) >= 4
                if hidden and value.casefold() not in visible:
                    assert value not in text, (episode.id, slot)
            for check in episode.success:
                assert check.get("pattern", "\0") not in text


def test_the_oracle_gives_the_same_signals_whatever_the_labels_say() -> None:
    scenarios = parse_scenarios(tiny())
    episode = scenarios.episodes[3]  # ambiguous audience
    relabel = tiny()
    relabel["episodes"][3]["category"] = "clear"
    relabel["episodes"][3]["blockers"] = []
    relabel["episodes"][3]["slots"]["audience"].pop("readings")
    relabel["episodes"][3]["slots"]["audience"]["in"] = "request"
    same_text = parse_scenarios(relabel).episodes[3]
    oracle = OracleSignals()
    first = oracle.signals(episode=episode, template=episode.template_def, known={})
    # the readings are what a perfect reader sees in "for devs"; the blocker list is not read
    assert first[1].unclear_slots
    again = OracleSignals().signals(
        episode=episode.__class__(**{**episode.__dict__, "clarification_slots": ()}),
        template=episode.template_def,
        known={},
    )
    assert again == first
    assert (
        OracleSignals().signals(episode=same_text, template=same_text.template_def, known={})
        != first
    )


def test_signal_noise_changes_the_oracle_deterministically() -> None:
    scenarios = parse_scenarios(tiny())
    episode = scenarios.episodes[0]
    clean = OracleSignals().signals(episode=episode, template=episode.template_def, known={})
    noisy = [
        OracleSignals(noise=0.9, seed=1).signals(
            episode=episode, template=episode.template_def, known={}
        )
        for _ in range(2)
    ]
    assert noisy[0] == noisy[1]
    assert noisy[0] != clean


def test_detectors_mode_passes_no_signals_and_makes_no_model_call() -> None:
    run = run_offline(parse_scenarios(tiny()), RunConfig(policies=["llm_judge"], memory=(True,)))
    decisions = [e["decision"] for e in run.events if e["actor"] == "agent"]
    assert decisions
    assert all(d["situation"]["signals"]["ambiguity"] is None for d in decisions)
    assert sum(r.model_calls for r in run.results) == 0


class Dead:
    """A chat model whose endpoint refuses connections."""

    def invoke(self, prompt: str) -> None:
        raise ConnectionRefusedError("[Errno 111] Connection refused")


def test_a_model_that_cannot_be_reached_stops_the_run_naming_profile_and_endpoint() -> None:
    scenarios = parse_scenarios(tiny())
    config = RunConfig(policies=["llm_judge"], mode="real", memory=(False,), model="local")
    config.endpoint = "openai gpt at http://127.0.0.1:9/v1"
    with pytest.raises(ModelUnavailable, match=r"'local' at openai gpt at http://127\.0\.0\.1:9"):
        run_offline(scenarios, config, chat_model=Dead())


def test_a_policy_that_reads_no_signal_makes_no_call_even_in_real_mode() -> None:
    signals = ModelSignals(Dead(), profile="local", endpoint="x")
    extraction, found = signals.for_policy("never", request="Plan a trip.", template=None, known={})
    assert (extraction, found, signals.usage.calls) == (None, None, 0)


@pytest.mark.django_db
def test_the_command_stops_with_a_clear_error_on_a_closed_port(tmp_path, settings) -> None:
    ModelProfile.objects.create(
        name="closed",
        provider=Provider.OPENAI,
        model="gpt-test",
        base_url="http://127.0.0.1:9/v1",
    )
    data = tiny()
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(CommandError, match=r"closed.*127\.0\.0\.1:9"):
        call_command(
            "collab_eval", "--scenarios", str(path), "--policy", "llm_judge", "--mode", "real",
            "--model", "closed", "--memory", "off", "--out", str(tmp_path / "o"),
            stdout=StringIO(), stderr=StringIO(),
        )  # fmt: skip


def test_the_oracle_provider_answers_without_a_query_outside_an_evaluation_run(
    django_assert_num_queries, db
) -> None:
    context = {"task": {"id": 1}, "request": "Plan a trip."}
    assert not oracle_active()
    with django_assert_num_queries(0):
        assert oracle_options(context) is None
    with oracle_run():
        assert oracle_active()
        with django_assert_num_queries(1):
            assert oracle_options(context) is None  # no oracle task 1: looked up, not found
    assert not oracle_active()


def _command(tmp_path, *args: str) -> dict:
    out = tmp_path / "out"
    call_command("collab_eval", *args, "--out", str(out), stdout=StringIO(), stderr=StringIO())
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


FORMAT_1_KEYS = {"format", "created", "scenarios", "config", "summaries", "episodes"}
FORMAT_1_CONFIG = {
    "engine",
    "mode",
    "mode_text",
    "policies",
    "memory",
    "seeds",
    "sessions",
    "model",
    "user",
}


@pytest.mark.parametrize("scenarios", ["default", "v2"])
def test_the_headline_command_works_on_both_formats_and_keeps_the_format_1_keys(
    tmp_path, scenarios: str
) -> None:
    if scenarios == "v2":
        path = tmp_path / "tiny.json"
        path.write_text(json.dumps(tiny(), ensure_ascii=False), encoding="utf-8")
        scenarios = str(path)
    args = [
        "--mode",
        "detectors",
        "--policy",
        "default",
        "--scenarios",
        scenarios,
        "--memory",
        "on",
    ]
    report = _command(tmp_path, *args, "--sessions", "1")
    assert set(report) >= FORMAT_1_KEYS
    assert report["format"] == 1
    assert set(report["config"]) >= FORMAT_1_CONFIG
    assert report["config"]["policies"] == [DEFAULT_POLICY]
    metrics = report["summaries"][0]["metrics"]
    assert {"by_category", "intervals", "redundant_questions", "document_preservation"} <= set(
        metrics
    )


def test_an_oracle_report_says_it_is_an_upper_bound(tmp_path) -> None:
    report = _command(
        tmp_path, "--mode", "oracle", "--policy", "never", "--sessions", "1", "--memory", "off"
    )
    assert "upper bound" in report["config"]["mode_label"]
    html = (tmp_path / "out" / "report.html").read_text(encoding="utf-8")
    assert "ORACLE UPPER BOUND" in html


def test_a_small_slice_plays_the_same_twice() -> None:
    scenarios = parse_scenarios(tiny())
    config = RunConfig(policies=["never", DEFAULT_POLICY, "bandit"], memory=(True, False), seeds=2)
    first, second = run_offline(scenarios, config), run_offline(scenarios, config)
    assert [r.to_dict() for r in first.results] == [r.to_dict() for r in second.results]
    assert first.summaries() == second.summaries()
    assert {r.category for r in first.results} == {"clear", "missing", "ambiguous", "contradictory"}


def test_default_names_the_new_agents_policy_and_all_adds_the_built_ins_once() -> None:
    from agents.evaluation.management.commands.collab_eval import parse_policies
    from agents.policies import POLICY_NAMES

    names = parse_policies("default,all")
    assert names[0] == DEFAULT_POLICY
    assert set(names) == {DEFAULT_POLICY, *POLICY_NAMES}
    assert len(names) == len(set(names))
    with pytest.raises(CommandError, match="unknown policy"):
        parse_policies("default,psychic")


def test_limit_plays_only_the_first_episodes_and_the_report_says_so(tmp_path) -> None:
    report = _command(tmp_path, "--policy", "never", "--memory", "off", "--limit", "3")
    assert len(report["episodes"]) == 3
    assert report["config"]["limit"] == 3
