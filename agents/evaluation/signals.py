"""Oracle signals for the real turn engine: when a task was created by an oracle-mode run of the
app engine, the policy's model signals (slot extraction, ambiguity, interpretations) come from
the oracle's perfect reading of the episode's text instead of a model.

Registered with agents.engine.policies_bridge when the evaluation app is ready, but active only
inside an evaluation run (`oracle_run()`, which the app engine enters for an oracle-mode run):
outside one the provider answers None at once, without a query, so real turns pay nothing for it."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import date
from typing import Any

from agents.evaluation.models import OracleTask
from agents.evaluation.offline import OracleSignals
from agents.evaluation.scenario import Episode, Task
from agents.policies.adapter import answers_by_slot
from agents.policies.templates import get_template


def episode_from_json(data: dict[str, Any]) -> Episode:
    return Episode(
        id=data["id"],
        user=data["user"],
        session=int(data["session"]),
        task=Task(
            title=data["task"]["title"],
            template=data["task"].get("template"),
            goal=data["task"].get("goal", ""),
            document=data["task"].get("document", ""),
        ),
        request=data["request"],
        slots=dict(data["slots"]),
        stated=dict(data["stated"]),
        needs_clarification=bool(data["clarification"]["needed"]),
        clarification_slots=tuple(data["clarification"]["slots"]),
        success=tuple(data["success"]),
        sources=dict(data.get("sources", {})),
        readings={k: tuple(v) for k, v in dict(data.get("readings", {})).items()},
    )


_lock = threading.Lock()
_active_runs = 0


def oracle_active() -> bool:
    return _active_runs > 0


@contextlib.contextmanager
def oracle_run() -> Iterator[None]:
    """While inside, the oracle provider looks up the tasks of oracle runs (this process only:
    the app engine's in-process worker)."""
    global _active_runs
    with _lock:
        _active_runs += 1
    try:
        yield
    finally:
        with _lock:
            _active_runs -= 1


def oracle_options(context: dict[str, Any]) -> dict[str, Any] | None:
    """decide_from_context options for an oracle task, else None (at once, without a query,
    outside an evaluation run)."""
    if not oracle_active():
        return None
    task_id = (context.get("task") or {}).get("id")
    oracle = OracleTask.objects.filter(task_id=task_id).first() if task_id else None
    if oracle is None:
        return None
    episode = episode_from_json(oracle.episode)
    today: date = oracle.today
    template = get_template(episode.task.template) if episode.task.template else None
    known = answers_by_slot(context, template, today=today)
    extraction, signals = OracleSignals().signals(episode=episode, template=template, known=known)
    return {
        "template_kind": episode.task.template,
        "signals": signals,
        "extraction": extraction,
        "today": today,
    }
