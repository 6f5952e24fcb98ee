"""Streamed exports: events as JSONL (one event per line, ``agents/review/export_events.py``)
and turns as CSV. See docs/review.md."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from datetime import datetime
from decimal import Decimal
from typing import Any

from agents.models import Turn
from agents.review.export_events import iter_events
from agents.review.export_spec import CHUNK, ExportSpec, iso, task_filter, timed
from agents.review.models import ReviewSettings

__all__ = ["TURN_COLUMNS", "ExportSpec", "jsonl_lines", "turns_csv_lines"]


def _default(value: Any) -> Any:
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, datetime):
        return iso(value)
    return str(value)


def jsonl_lines(spec: ExportSpec, settings: ReviewSettings | None) -> Iterator[str]:
    for event in iter_events(spec, settings):
        yield json.dumps(event, ensure_ascii=False, default=_default) + "\n"


TURN_COLUMNS = [
    "turn_id",
    "created_at",
    "workspace_id",
    "workspace",
    "task_id",
    "task",
    "agent",
    "trigger",
    "status",
    "policy",
    "policy_decision",
    "provider",
    "model",
    "tokens_in",
    "tokens_out",
    "cost",
    "duration_ms",
    "requested_by",
    "error",
    "parent_turn",
    "chain",
    "hop_kind",
]


class _Echo:
    def write(self, value: str) -> str:
        return value


def turns_csv_lines(spec: ExportSpec) -> Iterator[str]:
    writer = csv.writer(_Echo())
    yield writer.writerow(TURN_COLUMNS)
    rows = timed(Turn.objects.filter(task_filter(spec, "task__")), "created_at", spec).values_list(
        "pk",
        "at",
        "task__workspace_id",
        "task__workspace__name",
        "task_id",
        "task__title",
        "agent__name",
        "trigger",
        "status",
        "policy_name",
        "policy_decision__decision",
        "provider",
        "model",
        "tokens_in",
        "tokens_out",
        "cost",
        "started_at",
        "finished_at",
        "requested_by__username",
        "error",
        "parent_id",
        "chain_id",
        "hop_kind",
    )
    for row in rows.iterator(chunk_size=CHUNK):
        (
            pk,
            at,
            ws_id,
            ws,
            task_id,
            title,
            agent,
            trigger,
            status,
            policy,
            decision,
            provider,
            model,
            t_in,
            t_out,
            cost,
            started,
            finished,
            requested_by,
            error,
            parent,
            chain,
            hop_kind,
        ) = row
        duration = int((finished - started).total_seconds() * 1000) if started and finished else ""
        yield writer.writerow(
            [
                pk,
                iso(at),
                ws_id,
                ws,
                task_id,
                title,
                agent,
                trigger,
                status,
                policy,
                decision or "",
                provider,
                model,
                t_in,
                t_out,
                cost,
                duration,
                requested_by or "",
                error,
                parent or "",
                chain or "",
                hop_kind,
            ]
        )
