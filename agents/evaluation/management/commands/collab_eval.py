"""python manage.py collab_eval --scenarios FILE --policy NAME --model PROFILE --out DIR
python manage.py collab_eval --multi-agent [--scenarios FILE] [--teams team,single] --out DIR

Plays a scenario set with simulated users and writes DIR/report.json, DIR/report.html and
DIR/events.jsonl; ``--multi-agent`` plays the team episodes (agents of different roles, the
shared plan, a looping pair) through the app against one agent and writes
DIR/multi-agent.json and DIR/multi-agent.jsonl (docs/evaluation.md, "Multi-agent")."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from agents.evaluation import team_metrics
from agents.evaluation.offline import ModelUnavailable
from agents.evaluation.report import headline_table, save_png, write_report
from agents.evaluation.runner import RunConfig, run_offline, total_episodes
from agents.evaluation.scenario import ScenarioError, load_scenarios
from agents.evaluation.teams import CONFIGS as TEAM_CONFIGS
from agents.evaluation.teams import TEAM_SCENARIOS, team_episodes
from agents.evaluation.trivial import TRIVIAL_NAMES, trivial_policy
from agents.evaluation.turn_context import TemplateNotSupported
from agents.policies import DEFAULT_POLICY, POLICY_NAMES, registered_names


def parse_policies(value: str) -> list[str]:
    """A policy, a comma list, "all" (the built-ins), "default" (the policy a new agent gets,
    agents.policies.DEFAULT_POLICY) or "trivial" (the evaluation's counter-examples,
    agents.evaluation.trivial: never product policies)."""
    names: list[str] = []
    for raw in (n.strip() for n in value.split(",")):
        if raw == "all":
            names += list(POLICY_NAMES)
        elif raw == "trivial":
            names += list(TRIVIAL_NAMES)
        elif raw:
            names.append(DEFAULT_POLICY if raw == "default" else raw)
    names = list(dict.fromkeys(names))
    known = (*registered_names(), *TRIVIAL_NAMES)
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        raise CommandError(
            f"unknown policy {', '.join(unknown) or value!r}; choose from "
            + ", ".join(registered_names())
            + ", 'all' or 'trivial' ("
            + ", ".join(TRIVIAL_NAMES)
            + ")"
        )
    return names


def policy_entries(names: list[str]) -> list[Any]:
    """The names a run plays: product policies by name, counter-examples as objects."""
    return [trivial_policy(n) if n in TRIVIAL_NAMES else n for n in names]


MEMORY = {"on": (True,), "off": (False,), "both": (True, False)}


class Command(BaseCommand):
    help = "Run the evaluation harness: simulated users against the agent, report and plots."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenarios", default="default", help="a scenario file or set name")
        parser.add_argument(
            "--policy", default="all", help="a policy, a comma list, 'all' or 'trivial'"
        )
        parser.add_argument("--model", default="", help="model profile name (real mode, LLM user)")
        parser.add_argument(
            "--mode",
            choices=["detectors", "real", "oracle"],
            default="detectors",
            help="detectors: the product's own understanding (headline); real: plus the model's "
            "signals; oracle: a perfect reader (an upper bound)",
        )
        parser.add_argument(
            "--signal-noise",
            type=float,
            default=0.0,
            help="oracle mode: flip / drop probability of the perfect reader's signals (0..1)",
        )
        parser.add_argument(
            "--split", choices=["dev", "test", "all"], default="all", help="the episodes played"
        )
        parser.add_argument(
            "--table", action="store_true", help="print the headline table when done"
        )
        parser.add_argument(
            "--limit", type=int, default=None, help="play only the first N episodes (a slice)"
        )
        parser.add_argument("--memory", choices=sorted(MEMORY), default="both")
        parser.add_argument("--sessions", type=int, default=None)
        parser.add_argument("--seeds", type=int, default=1)
        parser.add_argument("--user", choices=["scripted", "llm"], default="scripted")
        parser.add_argument("--engine", choices=["offline", "app"], default="offline")
        parser.add_argument("--png", action="store_true", help="also write the plots as PNG")
        parser.add_argument(
            "--multi-agent",
            action="store_true",
            help="play the team episodes (writer and reviewer, coordinator and workers, a "
            "looping pair) through the app against one agent; --scenarios defaults to "
            "scenarios/teams/multi-agent.json",
        )
        parser.add_argument(
            "--teams",
            default=",".join(TEAM_CONFIGS),
            help="--multi-agent: the configurations, a comma list of " + ", ".join(TEAM_CONFIGS),
        )
        parser.add_argument("--out", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["multi_agent"]:
            self._multi_agent(options)
            return
        try:
            scenarios = load_scenarios(options["scenarios"])
        except ScenarioError as exc:
            raise CommandError(str(exc)) from exc
        if options["seeds"] < 1 or (options["sessions"] is not None and options["sessions"] < 1):
            raise CommandError("--seeds and --sessions must be at least 1")
        if not 0.0 <= options["signal_noise"] <= 1.0:
            raise CommandError("--signal-noise must be between 0 and 1")
        if options["signal_noise"] and options["mode"] != "oracle":
            raise CommandError("--signal-noise applies to --mode oracle only")
        split = "" if options["split"] == "all" else options["split"]
        try:
            scenarios.only(split)
        except ScenarioError as exc:
            raise CommandError(str(exc)) from exc
        names = parse_policies(options["policy"])
        if options["engine"] == "app" and any(n in TRIVIAL_NAMES for n in names):
            raise CommandError("the counter-examples ('trivial') play on the offline engine only")
        config = RunConfig(
            policies=policy_entries(names),
            mode=options["mode"],
            memory=MEMORY[options["memory"]],
            seeds=options["seeds"],
            sessions=options["sessions"],
            engine=options["engine"],
            model=options["model"],
            user=options["user"],
            signal_noise=options["signal_noise"],
            split=split,
            limit=options["limit"],
        )
        if config.engine == "app" and config.mode == "detectors":
            config.mode = "real"  # the app engine's turns run the product as it is
        if config.engine == "app":
            try:
                from agents.evaluation.app_engine import run_app
            except ImportError as exc:
                raise CommandError(f"the app engine needs the agents app: {exc}") from exc
        chat_model = None
        if config.engine != "app" and (config.mode == "real" or config.user == "llm"):
            if config.mode == "real" and not options["model"]:
                raise CommandError("--mode real needs --model PROFILE (or 'fake')")
            chat_model, config.price_per_1k_tokens = self._model(options["model"])
            config.endpoint = self._endpoint(options["model"])
        with tqdm(
            total=total_episodes(scenarios, config),
            desc="episodes",
            unit="ep",
            file=self.stderr._out,
            disable=options["verbosity"] == 0,
        ) as bar:
            if config.engine == "app":
                run = run_app(scenarios, config, progress=bar.update)
            else:
                try:
                    run = run_offline(scenarios, config, chat_model=chat_model, progress=bar.update)
                except ModelUnavailable as exc:
                    raise CommandError(f"the run stopped: {exc}") from exc
                except TemplateNotSupported as exc:
                    raise CommandError(str(exc)) from exc
        out_dir = Path(options["out"])
        report = write_report(
            run, out_dir, scenarios_name=scenarios.name, scenarios_origin=scenarios.origin
        )
        if options["png"]:
            save_png(report, out_dir)
        if options["table"]:
            self.stdout.write(headline_table(report))
        self.stdout.write(f"Wrote {out_dir / 'report.html'} ({len(run.results)} episodes).")

    def _multi_agent(self, options: dict[str, Any]) -> None:
        source = options["scenarios"]
        path = str(TEAM_SCENARIOS) if source == "default" else source
        try:
            scenarios = load_scenarios(path)
        except ScenarioError as exc:
            raise CommandError(str(exc)) from exc
        configs = [c.strip() for c in options["teams"].split(",") if c.strip()]
        unknown = [c for c in configs if c not in TEAM_CONFIGS]
        if unknown or not configs:
            raise CommandError(
                f"unknown configuration {', '.join(unknown) or options['teams']!r}; choose from "
                + ", ".join(TEAM_CONFIGS)
            )
        episodes = team_episodes(scenarios)
        if not episodes:
            raise CommandError(f"{path} has no episode with a 'team'")
        started = time.monotonic()
        with tqdm(
            total=len(episodes) * len(configs),
            desc="team episodes",
            unit="ep",
            file=self.stderr._out,
            disable=options["verbosity"] == 0,
        ) as bar:
            results, events = team_metrics.evaluate(scenarios, configs=configs, progress=bar.update)
        seconds = time.monotonic() - started
        out_dir = Path(options["out"])
        report = team_metrics.write_report(
            out_dir,
            results,
            events,
            scenarios=scenarios.name,
            scenarios_origin=scenarios.origin,
            configs=configs,
            seconds=round(seconds, 1),
        )
        if options["table"]:
            self.stdout.write(team_metrics.table(report["summaries"]))
        self.stdout.write(
            f"Wrote {out_dir / 'multi-agent.json'} ({len(results)} team episodes, {seconds:.1f} s)."
        )

    def _endpoint(self, name: str) -> str:
        from agents.evaluation.chat_models import profile_endpoint

        return profile_endpoint(name)

    def _model(self, name: str) -> tuple[Any, float]:
        from agents.evaluation.chat_models import chat_model_for_profile

        try:
            return chat_model_for_profile(name)
        except LookupError as exc:
            raise CommandError(str(exc)) from exc
