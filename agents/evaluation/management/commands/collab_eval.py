"""python manage.py collab_eval --scenarios FILE --policy NAME --model PROFILE --out DIR

Plays a scenario set with simulated users and writes DIR/report.json, DIR/report.html and
DIR/events.jsonl (docs/evaluation.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from agents.evaluation.report import save_png, write_report
from agents.evaluation.runner import RunConfig, run_offline, total_episodes
from agents.evaluation.scenario import ScenarioError, load_scenarios
from agents.policies import POLICY_NAMES, registered_names


def parse_policies(value: str) -> list[str]:
    if value == "all":
        return list(POLICY_NAMES)
    names = [n.strip() for n in value.split(",") if n.strip()]
    unknown = [n for n in names if n not in registered_names()]
    if unknown or not names:
        raise CommandError(
            f"unknown policy {', '.join(unknown) or value!r}; choose from "
            + ", ".join(registered_names())
            + " or 'all'"
        )
    return names


MEMORY = {"on": (True,), "off": (False,), "both": (True, False)}


class Command(BaseCommand):
    help = "Run the evaluation harness: simulated users against the agent, report and plots."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--scenarios", default="default", help="a scenario file or set name")
        parser.add_argument("--policy", default="all", help="a policy, a comma list, or 'all'")
        parser.add_argument("--model", default="", help="model profile name (real mode, LLM user)")
        parser.add_argument("--mode", choices=["oracle", "real"], default="oracle")
        parser.add_argument("--memory", choices=sorted(MEMORY), default="both")
        parser.add_argument("--sessions", type=int, default=None)
        parser.add_argument("--seeds", type=int, default=1)
        parser.add_argument("--user", choices=["scripted", "llm"], default="scripted")
        parser.add_argument("--engine", choices=["offline", "app"], default="offline")
        parser.add_argument("--png", action="store_true", help="also write the plots as PNG")
        parser.add_argument("--out", required=True)

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            scenarios = load_scenarios(options["scenarios"])
        except ScenarioError as exc:
            raise CommandError(str(exc)) from exc
        if options["seeds"] < 1 or (options["sessions"] is not None and options["sessions"] < 1):
            raise CommandError("--seeds and --sessions must be at least 1")
        config = RunConfig(
            policies=parse_policies(options["policy"]),
            mode=options["mode"],
            memory=MEMORY[options["memory"]],
            seeds=options["seeds"],
            sessions=options["sessions"],
            engine=options["engine"],
            model=options["model"],
            user=options["user"],
        )
        if config.engine == "app":
            try:
                from agents.evaluation.app_engine import run_app
            except ImportError as exc:
                raise CommandError(f"the app engine needs the agents app: {exc}") from exc
        chat_model = None
        if config.engine != "app" and (config.mode == "real" or config.user == "llm"):
            chat_model, config.price_per_1k_tokens = self._model(options["model"])
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
                run = run_offline(scenarios, config, chat_model=chat_model, progress=bar.update)
        out_dir = Path(options["out"])
        report = write_report(
            run, out_dir, scenarios_name=scenarios.name, scenarios_origin=scenarios.origin
        )
        if options["png"]:
            save_png(report, out_dir)
        self.stdout.write(f"Wrote {out_dir / 'report.html'} ({len(run.results)} episodes).")

    def _model(self, name: str) -> tuple[Any, float]:
        from agents.evaluation.chat_models import chat_model_for_profile

        try:
            return chat_model_for_profile(name)
        except LookupError as exc:
            raise CommandError(str(exc)) from exc
