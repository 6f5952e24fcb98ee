"""Oracle signals for the real turn engine: when a task was created by an oracle-mode run of the
app engine, the policy's model signals (slot extraction, ambiguity, interpretations) come from
the scenario's ground truth instead of a model. Registered with agents.policies_bridge when the
evaluation app is ready; a no-op for every other task."""

from __future__ import annotations

from datetime import date
from typing import Any

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
    )


def oracle_options(context: dict[str, Any]) -> dict[str, Any] | None:
    """decide_from_context options for an oracle task, else None."""
    from agents.evaluation.models import OracleTask

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
