"""The app engine end to end: simulated people drive the real services and the embedded Celery
worker thread (no eager mode) with a fake model that writes the chat into the document."""

from __future__ import annotations

import copy
import json
from io import StringIO

import pytest
from django.conf import settings
from django.core.management import call_command

from agents.evaluation.app_engine import run_app
from agents.evaluation.metrics import summarise
from agents.evaluation.models import OracleTask
from agents.evaluation.runner import RunConfig
from agents.evaluation.scenario import load_scenarios, parse_scenarios
from agents.memory.models import MemoryItem
from agents.models import Feedback, ModelProfile, PolicyState, Provider, Question, Turn
from agents.policies.bandit import REWARDS, ContextualBandit

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # The run starts the embedded worker thread itself; with REDIS_URL it would wait for a
    # separate worker process (tests/agents/test_worker.py covers those on Redis).
    pytest.mark.skipif(bool(settings.REDIS_URL), reason="embedded mode: in-process worker"),
]


@pytest.fixture
def scribe(db: None) -> ModelProfile:
    return ModelProfile.objects.create(name="scribe", provider=Provider.FAKE, model="eval_scribe")


def tiny_set(users: set[str], sessions: int = 2):
    raw = copy.deepcopy(dict(load_scenarios("default").raw))
    raw["users"] = [dict(u, patience=2) for u in raw["users"] if u["id"] in users]
    raw["episodes"] = [
        e for e in raw["episodes"] if e["user"] in users and e["session"] <= sessions
    ]
    return parse_scenarios(raw)


def test_oracle_run_through_the_app_asks_on_vague_requests_and_remembers_enforcements(
    scribe,
) -> None:
    # ana: clear trip and blog post; ben: a vague trip (s1); the scribe writes bullet lists,
    # which breaks ben's "numbered lists" preference, so he enforces it.
    scenarios = tiny_set({"ana", "ben"})
    config = RunConfig(policies=["llm_judge"], mode="oracle", memory=(True,), model="scribe")
    run = run_app(scenarios, config)
    by_id = {r.episode: r for r in run.results}
    assert len(run.results) == 4
    assert by_id["ana-s1-travel_plan"].asked is False
    assert by_id["ana-s1-travel_plan"].success is True
    assert by_id["ana-s1-travel_plan"].first_values_right is True  # the first document's values
    assert by_id["ben-s1-travel_plan"].questions_before_first >= 1
    assert by_id["ben-s1-travel_plan"].asked is True
    assert "budget" in by_id["ben-s1-travel_plan"].asked_before_first
    assert Question.objects.filter(status=Question.Status.ANSWERED).exists()
    assert OracleTask.objects.count() == 4
    assert {t.task.template for t in OracleTask.objects.select_related("task")} == {
        "travel_plan",
        "blog_post",
    }
    assert all(t.status in ("done", "waiting") for t in Turn.objects.all())
    remembered = MemoryItem.objects.filter(owner__username__endswith="-ben")
    assert remembered.filter(text__icontains="numbered lists").exists()
    assert not MemoryItem.objects.filter(owner__username__endswith="-ana").exists()
    metrics = summarise(run.results)
    assert metrics["cross_user_leakage"] == 0
    assert metrics["ask_precision"] == 1.0
    assert any(e["actor"] == "agent" and e["kind"] == "ask" for e in run.events)


def test_without_memory_nothing_is_remembered(scribe) -> None:
    scenarios = tiny_set({"ana"}, sessions=1)
    run_app(scenarios, RunConfig(policies=["never"], memory=(False,), model="scribe"))
    assert not MemoryItem.objects.exists()


def test_command_drives_the_app_engine(scribe, tmp_path) -> None:
    scenarios = tiny_set({"ana"}, sessions=1)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(dict(scenarios.raw)), encoding="utf-8")
    out = tmp_path / "run"
    call_command(
        "collab_eval", "--scenarios", str(path), "--policy", "never", "--engine", "app",
        "--model", "scribe", "--memory", "on", "--out", str(out),
        stdout=StringIO(), stderr=StringIO(),
    )  # fmt: skip
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    assert report["config"]["engine"] == "app"
    assert report["summaries"][0]["metrics"]["task_success"] == 1.0


def test_a_bandit_run_through_the_app_learns_from_the_simulated_peoples_feedback(scribe) -> None:
    # ben's vague trip: whatever the bandit does (ask, suggest or edit), ben reacts to each move
    # with feedback through record_feedback, which teaches the workspace's persisted state.
    scenarios = tiny_set({"ben"}, sessions=1)
    run = run_app(scenarios, RunConfig(policies=["bandit"], memory=(False,), model="scribe"))
    feedback = list(Feedback.objects.all())
    learned = [f for f in feedback if f.learned_reward is not None]
    assert feedback
    assert len(learned) == len(feedback)
    assert {f.learned_reward for f in learned} <= {REWARDS["up"], REWARDS["down"]}
    state = PolicyState.objects.get(policy_name="bandit", user__isnull=True)
    assert state.rewards == len(learned)
    fresh = ContextualBandit().to_state()
    assert state.state["arms"] != fresh["arms"]
    given = [e for e in run.events if e["actor"] == "user" and e["kind"] == "feedback"]
    assert [e["reward"] for e in given] == [f.learned_reward for f in sorted(learned, key=_pk)]
    result = run.results[0]
    assert result.feedback_up + result.feedback_down + result.feedback_unnecessary == len(given)
    metrics = summarise(run.results)
    assert metrics["feedback_given"] == len(given)
    assert metrics["thumbs_up"] == sum(f.rating == "up" for f in feedback)
    assert metrics["thumbs_down"] == sum(f.rating == "down" for f in feedback)


def _pk(row: Feedback) -> int:
    return int(row.pk)


def test_a_question_about_what_the_person_already_said_is_marked_unnecessary(scribe) -> None:
    # ben states his budget in slang the slot detector does not read ("a grand and a half"),
    # so ask_once's one question (real mode: text-only detection) asks for it among the
    # missing slots: ben answers "I already said" and marks the question card unnecessary.
    raw = copy.deepcopy(dict(tiny_set({"ben"}, sessions=1).raw))
    episode = raw["episodes"][0]
    episode["request"] = (
        "Plan a trip to Porto for three people in June, spending a grand and a half."
    )
    episode["stated"] = {**episode["stated"], "budget": "a grand and a half"}
    episode["clarification"]["slots"] = ["start_date"]
    scenarios = parse_scenarios(raw)
    run = run_app(
        scenarios, RunConfig(policies=["ask_once"], mode="real", memory=(False,), model="scribe")
    )
    result = run.results[0]
    assert result.redundant >= 1
    assert result.feedback_unnecessary == 1
    row = Feedback.objects.get(unnecessary_question=True)
    assert row.target_kind == Feedback.TargetKind.QUESTION
    assert row.question is not None
    assert row.question.turn_id == row.turn_id
    assert row.learned_reward is None  # ask_once does not learn
    assert summarise(run.results)["unnecessary_questions"] == 1
    given = [e for e in run.events if e["actor"] == "user" and e["kind"] == "feedback"]
    assert given[0]["text"] == "unnecessary_question"
    assert given[0]["target"] == "question"
    assert given[0]["target_id"] == row.question_id
