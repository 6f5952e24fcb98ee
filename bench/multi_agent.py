"""The multi-agent evaluation on a fresh install (issue 30): the hand-written team episodes
(agents/evaluation/scenarios/teams/multi-agent.json) played through the app by a team, one
agent, an echo agent and the team with its guards off, on the embedded default (skills, no
model; the looping pair are langchain-core fake models that hand the work straight back).

    python bench/multi_agent.py [--scenarios FILE] [--teams team,single,...]

Runs on a temporary SQLite file (DATABASE_URL and REDIS_URL are ignored) and prints the table
``collab_eval --multi-agent --table`` prints, each episode's outcome, the wall time and the
machine's load (/proc/loadavg). Figures measured are in docs/evaluation.md, "Multi-agent".
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def _setup(data_dir: str) -> None:
    from _embedded import setup  # bench/_embedded.py, beside this script

    setup(data_dir)


def _load() -> str:
    return Path("/proc/loadavg").read_text().strip() if Path("/proc/loadavg").exists() else "?"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", default="")
    parser.add_argument("--teams", default="team,single,trivial:echo,unguarded")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="collab-multi-agent-") as data_dir:
        _setup(data_dir)
        from agents.evaluation import team_metrics, teams
        from agents.evaluation.scenario import load_scenarios

        scenarios = load_scenarios(args.scenarios or str(teams.TEAM_SCENARIOS))
        configs = [c.strip() for c in args.teams.split(",") if c.strip()]
        print(f"load before: {_load()}")
        started = time.monotonic()
        results, _ = team_metrics.evaluate(scenarios, configs=configs)
        seconds = time.monotonic() - started
        print(team_metrics.table(team_metrics.summaries(results)))
        for r in results:
            verdict = "success" if r.success else "failed: " + "; ".join(r.failed)
            print(
                f"{r.config:>14} {r.episode:<22} hops {r.hops:>2} (longest {r.longest_chain:>2}) "
                f"guards {r.guards_tripped} turns {r.turns:>2}  {verdict}"
            )
        print(f"\n{len(results)} team episodes in {seconds:.1f} s; load after: {_load()}")


if __name__ == "__main__":
    main()
