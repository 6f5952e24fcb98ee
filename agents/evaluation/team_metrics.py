"""Figures of the multi-agent evaluation (issue 30, part 5), read from each played episode's
records: its chains and hops, Collab's notices, its messages, suggestions, questions, plan
steps, turns and final document. Nothing is taken from a label an agent produced: a step is
done when the document's box is ticked, success is the outcome checked against the
scenario's requirements (``judge``).

Per configuration (``summarise``): episodes, task success, hops per chain (hops / chains) and
the longest chain, people's interventions per episode (their chat messages after the request,
suggestions they decided, questions they answered, steps they ticked, Stops), guards tripped
and loops stopped (the loop detector's trips), the share of done plan steps decided by people
and by agents, chains the harness cut, and the cost per success: agent turns, model tokens and
money over the successful episodes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from django.db.models import Count, Sum

from agents.chains import plan as plan_format
from agents.evaluation.checks import describe, passes
from agents.evaluation.scenario import Episode, ScenarioSet
from agents.evaluation.teams import CONFIGS, COUNTER_EXAMPLES, Played, run_teams, team_episodes
from agents.models import Chain, Hop, PlanStep, Question, Suggestion, Turn
from agents.review.chains import LOOP_GUARD, TRIPPED_PREFIX, guard_of
from agents.review.metrics import STOPPED_PREFIX
from collab.tasks import documents
from collab.tasks.models import Message, Task


@dataclass
class TeamResult:
    config: str
    episode: str
    flow: str
    success: bool = False
    failed: list[str] = field(default_factory=list)  # the requirements the outcome missed
    chains: int = 0
    hops: int = 0
    longest_chain: int = 0
    interventions: int = 0
    guards_tripped: int = 0
    loops_stopped: int = 0
    plan_steps: int = 0
    steps_by_people: int = 0
    steps_by_agents: int = 0
    turns: int = 0
    tokens: int = 0
    cost: float = 0.0
    cut: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def count_records(task_id: int, result: TeamResult) -> None:
    """The process figures of one task, from its rows."""
    per_chain = list(
        Hop.objects.filter(chain__task_id=task_id)
        .values("chain_id")
        .annotate(n=Count("id"))
        .values_list("n", flat=True)
    )
    result.chains = Chain.objects.filter(task_id=task_id).count()
    result.hops = sum(per_chain)
    result.longest_chain = max(per_chain, default=0)
    notices = Message.objects.filter(
        task_id=task_id, kind=Message.Kind.SYSTEM, body__startswith=TRIPPED_PREFIX
    ).values_list("body", flat=True)
    names = [guard_of(body) for body in notices]
    result.guards_tripped = len(names)
    result.loops_stopped = names.count(LOOP_GUARD)
    people = Message.objects.filter(task_id=task_id, kind=Message.Kind.HUMAN).count()
    stops = Message.objects.filter(
        task_id=task_id, kind=Message.Kind.SYSTEM, body__startswith=STOPPED_PREFIX
    ).count()
    decided = Suggestion.objects.filter(task_id=task_id, decided_by__isnull=False).count()
    answered = Question.objects.filter(task_id=task_id, status=Question.Status.ANSWERED).count()
    steps = PlanStep.objects.filter(plan__task_id=task_id)
    result.plan_steps = steps.count()
    done = steps.filter(status=plan_format.DONE)
    result.steps_by_people = done.filter(done_by_agent__isnull=True).count()
    result.steps_by_agents = done.filter(done_by_agent__isnull=False).count()
    result.interventions = max(people - 1, 0) + decided + answered + stops
    result.interventions += result.steps_by_people
    spent = Turn.objects.filter(task_id=task_id).aggregate(
        n=Count("id"), tokens_in=Sum("tokens_in"), tokens_out=Sum("tokens_out"), cost=Sum("cost")
    )
    result.turns = spent["n"] or 0
    result.tokens = (spent["tokens_in"] or 0) + (spent["tokens_out"] or 0)
    result.cost = float(spent["cost"] or 0)


def judge(played: Played, episode: Episode) -> TeamResult:
    """Score one played episode from its outcome and records."""
    result = TeamResult(config=played.config, episode=played.episode, flow=played.flow)
    result.cut = played.cut
    count_records(played.task_id, result)
    task = Task.objects.get(pk=played.task_id)
    document = documents.read_document(task=task).text
    failed = [f"document: {describe(c)}" for c in episode.success if not passes(c, document)]
    team = episode.team or {}
    texts = {
        "agents": _bodies(played.task_id, Message.Kind.AGENT),
        "notices": _bodies(played.task_id, Message.Kind.SYSTEM),
    }
    for item in team.get("checks", ()):
        if not passes(item["check"], texts[item["on"]]):
            failed.append(f"{item['on']}: {describe(item['check'])}")
    if team.get("steps_done"):
        section = plan_format.parse(document)
        if not section.steps or any(s.status != plan_format.DONE for s in section.steps):
            failed.append("plan: every step of the plan ticked done")
    limit = team.get("max_hops")
    if limit is not None and result.longest_chain > int(limit):
        failed.append(f"chains: at most {limit} hops in a chain")
    if played.cut:
        failed.append("chains: none still going when the harness stopped the episode")
    result.failed = failed
    result.success = not failed
    return result


def _bodies(task_id: int, kind: str) -> str:
    rows = Message.objects.filter(task_id=task_id, kind=kind).order_by("pk")
    return "\n".join(rows.values_list("body", flat=True))


def _ratio(a: float, b: float) -> float | None:
    return a / b if b else None


def summarise(results: Sequence[TeamResult]) -> dict[str, Any]:
    """The figures of one configuration over its episodes."""
    n = len(results)
    wins = [r for r in results if r.success]
    chains = sum(r.chains for r in results)
    done_people = sum(r.steps_by_people for r in results)
    done_agents = sum(r.steps_by_agents for r in results)
    by_flow: dict[str, list[TeamResult]] = {}
    for r in results:
        by_flow.setdefault(r.flow, []).append(r)
    return {
        "episodes": n,
        "successes": len(wins),
        "success": _ratio(len(wins), n),
        "hops_per_chain": _ratio(sum(r.hops for r in results), chains),
        "longest_chain": max((r.longest_chain for r in results), default=0),
        "interventions_per_episode": _ratio(sum(r.interventions for r in results), n),
        "guards_tripped": sum(r.guards_tripped for r in results),
        "loops_stopped": sum(r.loops_stopped for r in results),
        "plan_steps": sum(r.plan_steps for r in results),
        "step_share_people": _ratio(done_people, done_people + done_agents),
        "step_share_agents": _ratio(done_agents, done_people + done_agents),
        "cut": sum(r.cut for r in results),
        "turns": sum(r.turns for r in results),
        "turns_per_success": _ratio(sum(r.turns for r in results), len(wins)),
        "tokens_per_success": _ratio(sum(r.tokens for r in results), len(wins)),
        "cost_per_success": _ratio(sum(r.cost for r in results), len(wins)),
        "success_by_flow": {
            flow: _ratio(sum(r.success for r in rs), len(rs))
            for flow, rs in sorted(by_flow.items())
        },
    }


def summaries(results: Sequence[TeamResult]) -> dict[str, dict[str, Any]]:
    grouped: dict[str, list[TeamResult]] = {}
    for r in results:
        grouped.setdefault(r.config, []).append(r)
    return {config: summarise(rs) for config, rs in grouped.items()}


def _fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "\u2013"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def table(by_config: Mapping[str, Mapping[str, Any]]) -> str:
    """The markdown table ``collab_eval --multi-agent --table`` prints."""
    flows = sorted({f for s in by_config.values() for f in s["success_by_flow"]})
    head = [
        "configuration",
        "episodes",
        "task success",
        *[f"success: {f}" for f in flows],
        "hops/chain",
        "longest chain",
        "interventions/episode",
        "guards tripped",
        "loops stopped",
        "steps by people",
        "steps by agents",
        "cut by harness",
        "turns/success",
        "tokens/success",
        "$/success",
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for config, s in by_config.items():
        label = f"{config} (counter-example)" if config in COUNTER_EXAMPLES else config
        row = [
            label,
            str(s["episodes"]),
            f"{_fmt(s['success'])} ({s['successes']}/{s['episodes']})",
            *[_fmt(s["success_by_flow"].get(f)) for f in flows],
            _fmt(s["hops_per_chain"]),
            str(s["longest_chain"]),
            _fmt(s["interventions_per_episode"]),
            str(s["guards_tripped"]),
            str(s["loops_stopped"]),
            _fmt(s["step_share_people"]),
            _fmt(s["step_share_agents"]),
            str(s["cut"]),
            _fmt(s["turns_per_success"], 1),
            _fmt(s["tokens_per_success"], 0),
            _fmt(s["cost_per_success"], 4),
        ]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def evaluate(
    scenarios: ScenarioSet,
    *,
    configs: Sequence[str] = CONFIGS,
    progress: Callable[[int], None] | None = None,
) -> tuple[list[TeamResult], list[dict[str, Any]]]:
    """Play and score every team episode with each configuration: the results and the event
    log (what the person did and said)."""
    events: list[dict[str, Any]] = []
    episodes = {e.id: e for e in team_episodes(scenarios)}
    played = run_teams(scenarios, configs=configs, progress=progress, log_event=events.append)
    return [judge(p, episodes[p.episode]) for p in played], events


def write_report(
    out_dir: Path, results: Sequence[TeamResult], events: Sequence[Mapping[str, Any]], **info: Any
) -> dict[str, Any]:
    """DIR/multi-agent.json (configuration, summaries, episodes) and DIR/multi-agent.jsonl."""
    out_dir.mkdir(parents=True, exist_ok=True)
    report = {
        "format": "multi-agent/1",
        **info,
        "summaries": summaries(results),
        "episodes": [r.to_dict() for r in results],
    }
    (out_dir / "multi-agent.json").write_text(
        json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8"
    )
    with (out_dir / "multi-agent.jsonl").open("w", encoding="utf-8") as fh:
        for event in events:
            fh.write(json.dumps(event, ensure_ascii=False, default=str) + "\n")
    return report
