from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command


def run(tmp_path, *args: str) -> dict:
    out = tmp_path / "run"
    call_command("collab_eval", *args, "--out", str(out), stdout=StringIO(), stderr=StringIO())
    assert (out / "report.html").exists()
    assert (out / "events.jsonl").read_text(encoding="utf-8").strip()
    return json.loads((out / "report.json").read_text(encoding="utf-8"))


def test_detectors_run_of_two_policies_writes_a_report_with_plots(tmp_path) -> None:
    report = run(tmp_path, "--policy", "never,llm_judge", "--sessions", "1", "--png")
    assert report["config"]["mode"] == "detectors"
    assert [(s["policy"], s["memory"]) for s in report["summaries"]] == [
        ("never", True),
        ("never", False),
        ("llm_judge", True),
        ("llm_judge", False),
    ]
    assert len(report["episodes"]) == 4 * 20
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert html.count("<svg") == 5
    assert "Mode: detectors" in html
    assert (tmp_path / "run" / "plot-adherence.png").stat().st_size > 1000


def test_real_mode_with_the_fake_model_counts_model_calls(tmp_path) -> None:
    report = run(
        tmp_path, "--policy", "llm_judge", "--mode", "real", "--model", "fake",
        "--memory", "off", "--sessions", "1", "--seeds", "2",
    )  # fmt: skip
    metrics = report["summaries"][0]["metrics"]
    assert report["config"]["mode"] == "real"
    assert metrics["model_calls"] > 0
    assert metrics["tokens"] > 0
    assert set(metrics["pass_hat_k"]) == {"1", "2"}


def test_unknown_policy_is_refused_with_the_choices() -> None:
    with pytest.raises(CommandError, match="value_of_information"):
        call_command("collab_eval", "--policy", "psychic", "--out", "unused")


def test_broken_scenario_file_is_refused_with_reasons(tmp_path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"name": "bad", "version": 1}), encoding="utf-8")
    with pytest.raises(CommandError, match="today"):
        call_command("collab_eval", "--scenarios", str(bad), "--out", str(tmp_path / "o"))
