"""The multi-agent evaluation (issue 30, part 5): team episodes played through the app, their
figures counted from the run's records and their success judged from the outcome, never from
a label an agent produced. Jobs run in this process (``teams.Dispatcher``), so on_commit
callbacks must fire: these tests commit (``transaction=True``)."""

from __future__ import annotations

import json
from dataclasses import replace
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from agents.evaluation import team_metrics, teams
from agents.evaluation.scenario import Episode, load_scenarios
from agents.models import Chain, Hop, PlanStep, Turn
from collab.tasks import documents
from collab.tasks.models import Message, Task

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def shipped() -> dict[str, Episode]:
    return {e.id: e for e in teams.team_episodes(load_scenarios(str(teams.TEAM_SCENARIOS)))}


def test_the_shipped_team_file_has_every_flow_and_stays_apart_from_the_one_agent_sets(
    shipped: dict[str, Episode],
) -> None:
    flows = [e.team["flow"] for e in shipped.values() if e.team]
    assert {"review", "plan", "loop"} <= set(flows)
    assert len(shipped) >= 5
    assert all(len(e.team["agents"]) >= 2 for e in shipped.values() if e.team)
    roles = {a["role"] for e in shipped.values() if e.team for a in e.team["agents"]}
    assert {"writer", "reviewer", "coordinator", "worker"} <= roles
    # the one-agent sets of scenarios/ never pick it up by name
    assert teams.TEAM_SCENARIOS.parent.name == "teams"


def test_a_single_agent_is_asked_what_the_team_was_asked():
    request = "@Writer draft it and ask @Reviewer to check it, cc @bob"
    assert teams.solo_request(request, ["Writer", "Reviewer"]) == (
        "@Solo draft it and ask Solo to check it, cc @bob"
    )


def test_the_hops_guards_and_loops_are_counted_from_the_records(
    shipped: dict[str, Episode],
) -> None:
    episode = shipped["closure-notice-loop"]

    played = teams.play(config="team", episode=episode, token="t1")
    result = team_metrics.judge(played, episode)

    hops = Hop.objects.filter(chain__task_id=played.task_id)
    assert result.hops == hops.count() >= 1
    assert result.chains == Chain.objects.filter(task_id=played.task_id).count() == 1
    assert result.longest_chain <= episode.team["max_hops"]  # the guard stopped it in budget
    notices = Message.objects.filter(
        task_id=played.task_id, body__startswith="Stopped this chain of agents: the "
    )
    assert result.guards_tripped == notices.count() == 1
    assert result.loops_stopped == notices.filter(body__contains="loop detector").count()
    assert result.turns == Turn.objects.filter(task_id=played.task_id).count()

    # one more hop in the records is one more hop in the figures
    hop = hops.first()
    assert hop is not None
    Hop.objects.create(
        chain=hop.chain,
        index=hop.index + 10,
        kind=hop.kind,
        from_turn=hop.from_turn,
        from_agent=hop.from_agent,
        to_agent=hop.to_agent,
        text=hop.text,
    )
    assert team_metrics.judge(played, episode).hops == result.hops + 1


def test_without_guards_the_pair_runs_past_its_budget_and_fails(
    shipped: dict[str, Episode],
) -> None:
    episode = shipped["closure-notice-loop"]

    played = teams.play(config="unguarded", episode=episode, token="t2")
    result = team_metrics.judge(played, episode)

    assert result.longest_chain > episode.team["max_hops"]
    assert result.guards_tripped == 0
    assert f"chains: at most {episode.team['max_hops']} hops in a chain" in result.failed
    assert not result.success


def test_success_is_read_from_the_final_document_not_from_what_an_agent_said(
    shipped: dict[str, Episode],
) -> None:
    episode = shipped["porto-trip-review"]
    played = teams.play(config="team", episode=episode, token="t3")
    assert team_metrics.judge(played, episode).success

    # the same run with the budget taken out of the document fails on that requirement
    task = Task.objects.get(pk=played.task_id)
    text = documents.read_document(task=task).text
    line = next(line for line in text.splitlines() if "1,800" in line or "1800" in line)
    documents.replace_in_document(task=task, find=line, replace="", author_label="test")
    judged = team_metrics.judge(played, episode)
    assert not judged.success
    assert judged.failed == ["document: matches /1[,.]?800/"]


def test_the_plan_steps_are_shared_as_the_document_and_the_records_say(
    shipped: dict[str, Episode],
) -> None:
    episode = shipped["office-move-plan"]

    played = teams.play(config="team", episode=episode, token="t4")
    result = team_metrics.judge(played, episode)

    steps = PlanStep.objects.filter(plan__task_id=played.task_id)
    assert result.plan_steps == steps.count() > 0
    assert result.steps_by_agents == steps.filter(done_by_agent__isnull=False).count() >= 1
    assert result.steps_by_people == steps.filter(done_by_person__isnull=False).count() >= 1
    assert result.interventions >= result.steps_by_people + 1  # their ticks, and the approval
    reviewed = steps.filter(done_by_agent__name="Reviewer", agent__name="Writer")
    assert reviewed.exists()  # the reviewer checked the writer's step (part B)

    # a step unticked in the document is a step not done, whatever the rows said before
    task = Task.objects.get(pk=played.task_id)
    line = next(
        line for line in documents.read_document(task=task).text.splitlines() if "- [x]" in line
    )
    documents.replace_in_document(
        task=task, find=line, replace=line.replace("- [x]", "- [ ]", 1), author_label="test"
    )
    assert "plan: every step of the plan ticked done" in team_metrics.judge(played, episode).failed


def test_the_team_beats_the_echo_agent_and_the_table_shows_both(
    shipped: dict[str, Episode],
) -> None:
    episode = shipped["porto-trip-review"]
    results = [
        team_metrics.judge(teams.play(config=config, episode=episode, token="t5"), episode)
        for config in ("team", "trivial:echo")
    ]
    by_config = team_metrics.summaries(results)

    assert by_config["team"]["success"] == 1.0
    assert by_config["trivial:echo"]["success"] == 0.0
    assert by_config["team"]["hops_per_chain"] == 1.0  # one review hop in one chain
    table = team_metrics.table(by_config)
    assert "| trivial:echo (counter-example) | 1 | 0.00 (0/1) |" in table
    assert "| team | 1 | 1.00 (1/1) |" in table


def test_the_summary_divides_by_what_was_counted():
    rows = [
        team_metrics.TeamResult(config="team", episode="a", flow="loop", chains=2, hops=5),
        team_metrics.TeamResult(
            config="team", episode="b", flow="plan", success=True, chains=1, hops=1, turns=4
        ),
    ]
    figures = team_metrics.summarise(rows)
    assert figures["hops_per_chain"] == 2.0  # 6 hops over 3 chains
    assert figures["turns_per_success"] == 4.0
    assert figures["success_by_flow"] == {"loop": 0.0, "plan": 1.0}
    assert team_metrics.summarise([replace(rows[0], chains=0, hops=0)])["hops_per_chain"] is None


def test_the_command_plays_a_team_file_and_prints_the_table(tmp_path) -> None:
    data = json.loads(teams.TEAM_SCENARIOS.read_text(encoding="utf-8"))
    data["episodes"] = [e for e in data["episodes"] if e["id"] == "price-list-loop"]
    small = tmp_path / "one.json"
    small.write_text(json.dumps(data), encoding="utf-8")
    out = StringIO()
    call_command(
        "collab_eval",
        "--multi-agent",
        "--scenarios",
        str(small),
        "--teams",
        "team,unguarded",
        "--table",
        "--out",
        str(tmp_path / "o"),
        stdout=out,
        stderr=StringIO(),
    )
    report = json.loads((tmp_path / "o" / "multi-agent.json").read_text(encoding="utf-8"))
    assert set(report["summaries"]) == {"team", "unguarded"}
    assert report["summaries"]["team"]["loops_stopped"] == 1  # three agents: the detector
    assert report["summaries"]["unguarded"]["longest_chain"] > 4
    assert "| unguarded (counter-example) |" in out.getvalue()
    with pytest.raises(CommandError, match="unknown configuration"):
        call_command("collab_eval", "--multi-agent", "--teams", "crowd", "--out", "unused")
